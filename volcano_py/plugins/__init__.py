"""The scheduling plugins, one module (or package) each."""
