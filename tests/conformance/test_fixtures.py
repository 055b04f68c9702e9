"""The fixtures are the same in every language: a runtime cannot pass by serving less.

No runtime is started here.
"""

from __future__ import annotations

import re
from pathlib import Path

from .launchers import FIXTURES, MODULE_FILES

LANGUAGES = sorted(MODULE_FILES)


def fixture_names(language: str) -> set[str]:
    return {folder.name for folder in (FIXTURES / language).iterdir() if folder.is_dir()}


def module_of(language: str, name: str) -> Path | None:
    for candidate in MODULE_FILES[language]:
        if (FIXTURES / language / name / candidate).is_file():
            return FIXTURES / language / name / candidate
    return None


def sources_of(language: str, name: str) -> str:
    """The text of fixture ``name``'s module and the sibling modules it imports (a Python main shares answers.py)."""
    folder = FIXTURES / language / name
    suffixes = {Path(candidate).suffix for candidate in MODULE_FILES[language]}
    return "\n".join(path.read_text() for path in sorted(folder.iterdir()) if path.suffix in suffixes)


def paths_answered(source: str) -> set[str]:
    """The request paths a main fixture compares against: string literals starting with '/'."""
    return set(re.findall(r"""path(?:\.startswith\(|\.startsWith\(| == | === )['"](/[^'"]*)['"]""", source))


def test_every_language_has_the_same_fixtures():
    names = {language: fixture_names(language) for language in LANGUAGES}
    first = names[LANGUAGES[0]]
    for language in LANGUAGES[1:]:
        assert names[language] == first, f"{language} differs: only in it {names[language] - first}, missing {first - names[language]}"
    assert {"main", "async_main", "req_only", "no_args", "legacy", "override", "hooks"} <= first


def test_each_fixture_has_its_module_or_none_on_purpose():
    for language in LANGUAGES:
        for name in fixture_names(language):
            has_module = module_of(language, name) is not None
            assert has_module == (name != "missing_file"), (language, name)


def test_the_main_fixtures_answer_the_same_paths():
    found = {language: paths_answered(sources_of(language, "main")) for language in LANGUAGES}
    first = found[LANGUAGES[0]]
    assert len(first) >= 30, sorted(first)
    for language in LANGUAGES[1:]:
        assert found[language] == first, f"{language}: only in it {found[language] - first}, missing {first - found[language]}"


def test_the_signature_fixtures_answer_the_same_paths():
    for name in ("async_main", "legacy", "hooks"):
        found = {language: set(re.findall(r"""['"](/[a-z][a-z/-]*)['"]""", sources_of(language, name))) for language in LANGUAGES}
        assert len(set(map(frozenset, found.values()))) == 1, (name, found)


def functions_defined(source: str) -> dict[str, bool]:
    """The module's top-level functions: name -> whether it is ``async def`` (read as text: one fixture is a syntax error)."""
    return {name: bool(is_async) for is_async, name in re.findall(r"^(async )?def (\w+)\(", source, re.M)}


def test_the_async_python_fixtures_are_the_python_ones_written_async_def():
    """fixture/python-async is fixture/python for funcwsgi's event-loop path: the same functions, hooks and
    helpers by name, and every function the runtime calls (main, the hooks, the exports a loading error lists)
    is ``async def``."""
    for name in fixture_names("python"):
        sync, loop = module_of("python", name), module_of("python-async", name)
        if sync is None:
            continue
        plain, awaited = functions_defined(sync.read_text()), functions_defined(loop.read_text())  # type: ignore[union-attr]
        assert set(awaited) == set(plain), (name, sorted(plain), sorted(awaited))
        called = {function for function in awaited if not function.startswith("_")}
        assert called and all(awaited[function] for function in called), (name, awaited)
