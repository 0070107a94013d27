"""What the MCP Registry and Claude Desktop read: server.json against the registry's published schema
(tests/data/registry/, PROVENANCE.md says where it came from), and the bundle, validated and packed
by the pinned `@anthropic-ai/mcpb` (deploy/mcpb/, `make mcpb-deps`)."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.packaging

SERVER_JSON = json.loads((REPO / "server.json").read_text())
SCHEMA = json.loads((REPO / "tests" / "data" / "registry" / "server.schema.json").read_text())
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
BUNDLE = REPO / "deploy" / "mcpb"
MANIFEST = json.loads((BUNDLE / "manifest.json").read_text())
MCPB = BUNDLE / "node_modules" / ".bin" / "mcpb"
RAW = "https://raw.githubusercontent.com/tomtom-maps-mcp/tomtom-maps-mcp/main/"


def registry_errors(document: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(document)]


def test_server_json_is_valid_under_the_registrys_schema():
    assert SERVER_JSON["$schema"] == SCHEMA["$id"]
    assert registry_errors(SERVER_JSON) == []


def test_the_schema_refuses_what_the_registry_refuses():
    """The kept schema is the real one: a description over 100 characters and a `latest` version fail."""
    too_long = {**SERVER_JSON, "description": "x" * 101}
    latest = {**SERVER_JSON, "packages": [{**SERVER_JSON["packages"][0], "version": "latest"}]}
    assert registry_errors(too_long) and registry_errors(latest)


def test_server_json_names_this_release_and_its_entry_points():
    (package,) = [package for package in SERVER_JSON["packages"] if package["registryType"] == "pypi"]
    assert (package["registryType"], package["identifier"]) == ("pypi", PROJECT["name"])
    assert SERVER_JSON["version"] == package["version"] == PROJECT["version"] == MANIFEST["version"]
    assert package["transport"] == {"type": "stdio"} and PROJECT["name"] in PROJECT["scripts"]
    (remote,) = SERVER_JSON["remotes"]
    assert remote["type"] == "streamable-http" and remote["url"].endswith("/mcp")
    # The registry proves the PyPI package is ours by this marker in its README (the long description).
    assert f"<!-- mcp-name: {SERVER_JSON['name']} -->" in (REPO / "README.md").read_text()


def test_every_icon_is_a_file_of_this_repository():
    for icon in SERVER_JSON["icons"]:
        assert icon["src"].startswith(RAW)
        assert (REPO / icon["src"].removeprefix(RAW)).is_file()
    assert (BUNDLE / MANIFEST["icon"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_bundle_installs_this_release_and_passes_the_key_by_its_setting():
    bundle = tomllib.loads((BUNDLE / "pyproject.toml").read_text())["project"]
    assert bundle["dependencies"] == [f"{PROJECT['name']}=={PROJECT['version']}"]
    env = MANIFEST["server"]["mcp_config"]["env"]
    assert env["TOMTOM_API_KEY"] == "${user_config.tomtom_api_key}"
    assert MANIFEST["user_config"]["tomtom_api_key"]["sensitive"] is True
    assert re.search(r"\bmain\(\[\"stdio\"\]\)", (BUNDLE / MANIFEST["server"]["entry_point"]).read_text())


@pytest.mark.skipif(not MCPB.exists(), reason="needs @anthropic-ai/mcpb: make mcpb-deps (npm ci in deploy/mcpb)")
def test_mcpb_validates_and_packs_the_bundle(tmp_path: Path):
    validated = subprocess.run([MCPB, "validate", "manifest.json"], cwd=BUNDLE, capture_output=True, text=True)
    assert validated.returncode == 0 and "validation passes" in validated.stdout, validated.stdout + validated.stderr
    packed = subprocess.run(
        [MCPB, "pack", ".", tmp_path / "tomtom-maps-mcp.mcpb"], cwd=BUNDLE, capture_output=True, text=True
    )
    assert packed.returncode == 0, packed.stdout + packed.stderr
    names = set(zipfile.ZipFile(tmp_path / "tomtom-maps-mcp.mcpb").namelist())
    assert names == {"manifest.json", "pyproject.toml", "server/main.py", "icon.png"}


def test_the_container_image_is_listed_beside_the_package_and_names_its_entry():
    """The registry pulls an `oci` package's image and checks its label against server.json's name;
    the image runs stdio when asked (`tomtom-maps-mcp stdio`), with the same settings."""
    (pypi,) = [package for package in SERVER_JSON["packages"] if package["registryType"] == "pypi"]
    (oci,) = [package for package in SERVER_JSON["packages"] if package["registryType"] == "oci"]
    assert oci["identifier"].endswith(f":{PROJECT['version']}")
    assert oci["transport"] == {"type": "stdio"} and oci["packageArguments"] == [
        {"type": "positional", "value": "stdio"}
    ]
    assert oci["environmentVariables"] == pypi["environmentVariables"]
    dockerfile = (REPO / "Dockerfile").read_text()
    assert f'LABEL io.modelcontextprotocol.server.name="{SERVER_JSON["name"]}"' in dockerfile
    assert 'ENTRYPOINT ["tomtom-maps-mcp"]' in dockerfile


def test_the_bundle_names_the_privacy_policies_of_everyone_who_sees_its_data():
    """Every query goes to TomTom: the bundle names TomTom's privacy statement and ours, which is a
    file of this repository."""
    tomtom, ours = MANIFEST["privacy_policies"]
    assert tomtom == "https://www.tomtom.com/privacy/"
    blob = "https://github.com/tomtom-maps-mcp/tomtom-maps-mcp/blob/main/"
    assert ours.startswith(blob) and (REPO / ours.removeprefix(blob)).is_file()
