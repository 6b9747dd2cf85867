"""The round trip of emitted text: bash words read back to literals, #SBATCH lines and srun argv
to the model's types, and the verifier that checks the text says what the model says."""
