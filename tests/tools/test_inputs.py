"""Typed inputs (tools.inputs): one declaration gives the schema, the validation and the errors.

The models here are our own, so these tests state the semantics every tool relies on.
"""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field, model_validator

from core.errors import ToolError
from tools.definitions.common import BoundingBox, PointsDetail, Position
from tools.inputs import (
    UNIQUE,
    ToolInput,
    backend_schema,
    exactly_one,
    exclusive,
    input_schema,
    only_on_backend,
    parse,
    requires,
)
from tools.schema import SchemaDefinitionError
from tools.tomtom.backends import Backend


class Stop(ToolInput):
    position: Position
    label: Annotated[str, Field(max_length=20)] | None = None
    radius: int | None = Field(None, ge=1, le=1000)

    @model_validator(mode="after")
    def _rules(self) -> Stop:
        requires(self, "radius", "label")
        return self


class Trip(ToolInput):
    name: Annotated[str, Field(min_length=1, max_length=40, description="What to call it.")]
    stops: list[Stop] = Field(default_factory=list, max_length=5)
    mode: Literal["car", "bike"] = "car"
    tags: Annotated[list[str], Field(max_length=3), UNIQUE] | None = None
    box: BoundingBox | None = None
    depart: str | None = None
    arrive: str | None = None
    detail: PointsDetail = "compact"

    @model_validator(mode="after")
    def _rules(self) -> Trip:
        exclusive(self, "depart", "arrive", message="leave at a time or arrive by one, not both")
        return self


def error_of(arguments: dict, model: type[ToolInput] = Trip, hints: dict | None = None) -> dict:
    with pytest.raises(ToolError) as caught:
        parse(model, arguments, hints)
    assert caught.value.code.value == "invalid_arguments"
    return caught.value.as_dict()["error"]


def test_a_valid_call_is_typed_and_defaults_are_filled_in():
    trip = parse(Trip, {"name": "Home", "stops": [{"position": [4.9, 52.37]}]})
    assert trip.mode == "car" and trip.stops[0].position == [4.9, 52.37] and trip.tags is None
    assert trip.given("stops") and not trip.given("mode")


def test_unknown_arguments_are_named_with_the_valid_ones():
    error = error_of({"name": "x", "colour": "red", "zoom": 3})
    assert error["argument"] == "colour"
    assert error["message"] == (
        "unknown argument(s) colour, zoom in arguments; valid: arrive, box, depart, detail, mode, name, stops, tags"
    )


def test_an_unknown_nested_argument_names_its_path():
    error = error_of({"name": "x", "stops": [{"position": [1, 2]}, {"position": [1, 2], "size": 1}]})
    assert error["argument"] == "stops[1].size"
    assert error["message"] == "unknown argument(s) size in stops[1]; valid: label, position, radius"


def test_unknown_names_come_before_other_problems():
    assert error_of({"nmae": "x"})["argument"] == "nmae"


def test_missing_and_out_of_range_name_the_argument():
    assert error_of({}) == {"code": "invalid_arguments", "message": "name: is required", "argument": "name"}
    error = error_of({"name": "x", "stops": [{"position": [1, 2], "label": "a", "radius": 5000}]})
    assert error["argument"] == "stops[0].radius"
    assert error["message"] == "stops[0].radius: should be less than or equal to 1000"


def test_a_wrong_position_names_the_coordinate():
    error = error_of({"name": "x", "stops": [{"position": [1, 2]}, {"position": [1, 95]}]})
    assert error["argument"] == "stops[1].position[1]"
    assert "latitude 95 is outside -90..90" in error["message"]


def test_a_box_must_have_south_below_north():
    assert error_of({"name": "x", "box": [0, 5, 1, 2]})["argument"] == "box"


def test_enums_list_the_allowed_values():
    error = error_of({"name": "x", "mode": "plane"})
    assert error["message"] == "mode: 'plane' is not one of the allowed values: car, bike"


def test_a_rule_names_every_input_involved():
    error = error_of({"name": "x", "depart": "now", "arrive": "2026-12-01T10:00"})
    assert error == {
        "code": "invalid_arguments",
        "message": "`depart` and `arrive`: leave at a time or arrive by one, not both",
        "arguments": ["depart", "arrive"],
    }


def test_a_nested_rule_names_its_inputs_by_path():
    error = error_of({"name": "x", "stops": [{"position": [1, 2], "radius": 5}]})
    assert error["arguments"] == ["stops[0].radius", "stops[0].label"]


def test_an_item_given_twice_counts_once():
    assert parse(Trip, {"name": "x", "tags": ["a", "b", "a"]}).tags == ["a", "b"]
    assert error_of({"name": "x", "tags": ["a", "a", "a", "a"]})["argument"] == "tags"  # bounds count items sent


def test_types_are_strict():
    assert error_of({"name": 5})["argument"] == "name"
    assert error_of({"name": "x", "stops": [{"position": [1, 2], "label": "a", "radius": "5"}]})["argument"] == (
        "stops[0].radius"
    )


def test_numbers_must_be_finite():
    assert error_of({"name": "x", "stops": [{"position": [float("inf"), 2]}]})["argument"] == "stops[0].position[0]"


def test_a_point_only_detail_refuses_geometry_with_the_hint():
    error = error_of({"name": "x", "detail": "geometry"}, hints={"points_only": "Tools with geometry: a, b"})
    assert error["argument"] == "detail"
    assert error["message"] == (
        "detail: this tool returns points only, so it has no 'geometry'; use compact or full. Tools with geometry: a, b"
    )


class Area(ToolInput):
    center: Position | None = None
    polygon: list[Position] | None = None

    @model_validator(mode="after")
    def _rules(self) -> Area:
        exactly_one(self, "center", "polygon", what="area")
        return self


def test_exactly_one_names_the_choices():
    assert error_of({}, Area)["arguments"] == ["center", "polygon"]
    assert error_of({}, Area)["message"] == "`center` and `polygon`: give an area"
    both = error_of({"center": [1, 2], "polygon": [[1, 2]]}, Area)
    assert both["message"] == "`center` and `polygon`: give exactly one area"


def test_the_schema_is_compact_and_self_contained():
    schema = input_schema(Trip)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["name"]
    assert next(iter(schema["properties"])) == "name"  # required inputs first
    assert schema["properties"]["name"] == {
        "type": "string",
        "description": "What to call it.",
        "maxLength": 40,
        "minLength": 1,
    }
    text = repr(schema)
    assert "title" not in text and "$ref" not in text and "$defs" not in text and "anyOf" not in text
    assert schema["properties"]["stops"]["items"]["properties"]["position"]["minItems"] == 2  # nested, inlined
    assert "uniqueItems" not in schema["properties"]["tags"]  # a repeat changes nothing: no words for it
    assert "default" not in schema["properties"]["depart"]  # optional: no `default: null`
    assert schema["properties"]["mode"] == {"type": "string", "default": "car", "enum": ["car", "bike"]}


def test_every_problem_is_answered_at_once_each_with_its_path():
    error = error_of({"mode": "plane", "tags": ["a", 5], "stops": [{"position": [1, 95]}], "zoom": 3})
    assert [p.get("argument") for p in error["problems"]] == ["zoom", "name", "mode", "tags[1]", "stops[0].position[1]"]
    assert error["argument"] == "zoom"  # the first, as when there is one
    assert (error["total"], error["returned"], error["truncated"]) == (5, 5, False)
    assert error["message"].startswith("5 problems: unknown argument(s) zoom in arguments; valid: ")
    assert "; name: is required; mode: 'plane' is not one of the allowed values: car, bike; " in error["message"]
    assert error["problems"][1] == {"argument": "name", "message": "name: is required"}


def test_the_problems_listed_are_capped():
    stops = [{"position": [1, 95 + i]} for i in range(5)]
    error = error_of({"stops": stops, "tags": [1, 2, 3], "mode": "plane", "box": [0, 5, 1, 2], "detail": "x"})
    assert error["total"] == 12 and error["returned"] == 10 and error["truncated"] is True
    assert len(error["problems"]) == 10 and error["message"].endswith("; and 2 more")


def test_unknown_names_are_capped_and_cut():
    error = error_of({"name": "x", **{f"{'x' * 100}{i:02}": 1 for i in range(12)}})
    assert "and 2 more in arguments" in error["message"] and "x" * 101 not in error["message"]


ONLY_CARS = only_on_backend(Backend.ORBIS, "car", why="it plans for cars only")


class Drive(ToolInput):
    mode: Annotated[Literal["car", "bike"], ONLY_CARS] = "car"
    modes: Annotated[list[Annotated[Literal["car", "bike"], ONLY_CARS]], Field(max_length=2)] | None = None
    load: Annotated[int, only_on_backend(Backend.ORBIS, why="it knows no loads")] | None = None


def test_a_backend_lists_only_what_it_takes():
    orbis, genesis = backend_schema(Drive, Backend.ORBIS), backend_schema(Drive, Backend.GENESIS)
    assert "mode" not in orbis["properties"]  # only its default is left: no choice to offer
    assert orbis["properties"]["modes"]["items"]["enum"] == ["car"]
    assert "load" not in orbis["properties"]
    assert genesis == input_schema(Drive) and genesis["properties"]["mode"]["enum"] == ["car", "bike"]
    assert "x-backends" not in repr(orbis) + repr(genesis)


def test_a_value_the_backend_refuses_is_unsupported_naming_the_backend_that_takes_it():
    with pytest.raises(ToolError) as caught:
        parse(Drive, {"mode": "bike"}, backend=Backend.ORBIS)
    assert caught.value.as_dict()["error"] == {
        "code": "unsupported",
        "message": "mode: 'bike' is not available on tomtom-orbis-maps (it plans for cars only); send car, or use the "
        "tomtom-maps backend (header `tomtom-maps-backend: tomtom-maps`; TOMTOM_MAPS_BACKEND on stdio and exec)",
        "argument": "mode",
        "backend": "tomtom-orbis-maps",
        "supported_on": ["tomtom-maps"],
        "allowed": ["car"],
    }
    assert parse(Drive, {"mode": "bike"}, backend=Backend.GENESIS).mode == "bike"
    assert parse(Drive, {"mode": "bike"}).mode == "bike"  # no backend: not checked
    assert parse(Drive, {}, backend=Backend.ORBIS).mode == "car"  # a default is never refused
    assert parse(Drive, {"mode": "car"}, backend=Backend.ORBIS).mode == "car"  # nor sent, though not listed


def test_an_input_the_backend_refuses_and_an_invalid_one_are_answered_together():
    with pytest.raises(ToolError) as caught:
        parse(Drive, {"load": 3, "modes": ["car", "bike"], "mode": "plane"}, backend=Backend.ORBIS)
    error = caught.value.as_dict()["error"]
    assert error["code"] == "invalid_arguments"
    by_path = {p["argument"]: p for p in error["problems"]}
    assert set(by_path) == {"mode", "modes[1]", "load"}
    assert by_path["load"]["message"].startswith("load: is not available on tomtom-orbis-maps (it knows no loads)")
    assert by_path["modes[1]"]["backend"] == "tomtom-orbis-maps"


def test_a_listing_limit_must_fit_the_input():
    class Wrong(ToolInput):
        size: Annotated[int, only_on_backend(Backend.ORBIS, 1, why="x")] = 1

    class Required(ToolInput):
        load: Annotated[int, only_on_backend(Backend.ORBIS, why="x")]

    with pytest.raises(SchemaDefinitionError, match="only an enum's values"):
        backend_schema(Wrong, Backend.ORBIS)
    with pytest.raises(SchemaDefinitionError, match="required input is not offered"):
        backend_schema(Required, Backend.ORBIS)
