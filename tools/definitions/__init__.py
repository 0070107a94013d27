"""One module per tool. Each declares `TOOL = define_tool(...)`; `tools.catalog` lists them."""
