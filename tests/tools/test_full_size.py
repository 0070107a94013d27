"""A `full` answer over MCP_MAX_FULL_CHARS asks for compact or geometry instead."""

import pytest

from tools.errors import ToolError
from tools.shaping.full import full_answer


def test_a_full_answer_within_the_limit_is_returned_as_is():
    body = {"routes": [{"summary": {"lengthInMeters": 1}}]}
    assert full_answer(body, 1_000) is body


@pytest.mark.parametrize(
    ("geometry", "instead"), [(True, "use `compact` or `geometry` instead"), (False, "use `compact` instead")]
)
def test_a_full_answer_over_the_limit_names_response_detail(geometry, instead):
    with pytest.raises(ToolError) as raised:
        full_answer({"results": ["x" * 200]}, 100, geometry=geometry)
    error = raised.value.as_dict()["error"]
    assert error["code"] == "invalid_arguments" and error["argument"] == "response_detail"
    assert instead in error["message"] and "MCP_MAX_FULL_CHARS" in error["message"]
