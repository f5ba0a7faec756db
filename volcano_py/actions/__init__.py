"""The scheduling actions, one module each."""
