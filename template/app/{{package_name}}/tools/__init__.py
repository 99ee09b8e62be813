"""Tool adapters: strands-tools loaded on first call, MCP servers, and the answers' prebuilt tools."""
