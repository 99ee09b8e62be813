"""The agent: its wire, gate, tools and model. See README.md."""
