"""Session, hook table and dispatcher, Statement, registries, configuration."""
