"""Stores for the lens's tests: built once per module, copied per test."""

from __future__ import annotations

import shutil

import pytest
from lens_builders import (
    Story,
    dreamed,
    many_links,
    one_memory,
    still_clock,
    story,
    workspace,
)


@pytest.fixture(scope="session")
def story_template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("story")
    built = story(folder)
    built.ws.close()
    return folder, built.ids


@pytest.fixture
def story_ws(story_template, tmp_path):
    """A copy of the small story's store, for a test to read and write."""
    folder, ids = story_template
    shutil.copytree(folder / ".ctx", tmp_path / ".ctx")
    built = Story(workspace(tmp_path, still_clock()), ids)
    yield built
    built.ws.close()


@pytest.fixture
def one_ws(tmp_path):
    ws = one_memory(tmp_path)
    yield ws
    ws.close()


@pytest.fixture
def empty_ws(tmp_path):
    ws = workspace(tmp_path)
    yield ws
    ws.close()


@pytest.fixture(scope="session")
def many_links_template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many")
    ws, hub = many_links(folder)
    ws.close()
    return folder, hub


@pytest.fixture
def many_links_ws(many_links_template, tmp_path):
    """A copy of the store whose hub memory has 500 links, and the hub's id."""
    folder, hub = many_links_template
    shutil.copytree(folder / ".ctx", tmp_path / ".ctx")
    ws = workspace(tmp_path)
    yield ws, hub
    ws.close()


@pytest.fixture(scope="session")
def dreamed_template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dreamed")
    ws, ids = dreamed(folder)
    ws.close()
    return folder, ids


@pytest.fixture
def dreamed_ws(dreamed_template, tmp_path):
    """A copy of the store Dream proposed on (a duplicate, an update, a
    recurrence), and the memories' ids."""
    folder, ids = dreamed_template
    shutil.copytree(folder / ".ctx", tmp_path / ".ctx")
    built = Story(workspace(tmp_path, still_clock()), ids)
    yield built
    built.ws.close()
