# Fixture helper that submit.py copies beside a custom lm_eval config.
