"""The model: the provider the settings name, a scripted model for tests, and rehearsal."""
