"""Prints, one a line, the tool names in a saved model request (Anthropic `tools[].name`,
Gemini `tools[].functionDeclarations[].name`). Usage: tool_names.py FILE."""
import json
import sys

request = json.load(open(sys.argv[1], encoding="utf-8"))
for tool in request.get("tools", []):
    if "name" in tool:
        print(tool["name"])
    for declaration in tool.get("functionDeclarations", []):
        print(declaration["name"])
