"""Tool adapters: strands-tools loaded when first called, MCP servers, the prebuilt tools."""
