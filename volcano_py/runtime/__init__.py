"""Leader election, health and metrics HTTP, logging, the scheduling loop's thread."""
