"""One module per tool. Each declares `TOOL = define_tool(...)`; `tools.registry` lists them."""
