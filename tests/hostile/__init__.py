"""The hostile-input harness: attack classes, the cases tried and the cases handled."""
