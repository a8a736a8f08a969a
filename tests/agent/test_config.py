"""Configuration (SPEC §2): discovery, overrides, validation with file, line and key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from mm_tui.agent.config import (
    Config,
    ConfigError,
    config_candidates,
    load_config,
    parse_config_text,
    yaml_source,
)
from mm_tui.agent.config.loading import MAX_CONFIG_BYTES
from mm_tui.support.paths import config_dir


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_match_the_spec() -> None:
    config = Config()
    assert config.base_url == "http://localhost:11434/v1"
    assert (config.api_key, config.model, config.temperature) == ("none", None, None)
    assert (config.bash_tool, config.edit_tools, config.skills_dir) == (True, True, ".mm/skills")
    assert (config.max_output, config.preview_lines, config.max_turns) == (10000, 12, 40)
    assert (config.permissions, config.yolo, config.lsp_servers) == ("ask", False, None)


def test_discovery_order_and_the_first_found_wins(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    cwd = tmp_path / "project"
    cwd.mkdir()
    assert load_config(cwd=cwd, env=env).source is None
    write(tmp_path / "xdg/mm/config.yaml", "model: from-xdg\n")
    assert load_config(cwd=cwd, env=env).model == "from-xdg"
    write(cwd / "mm.yaml", "model: from-mm\n")
    assert load_config(cwd=cwd, env=env).model == "from-mm"
    write(cwd / ".mm.yaml", "model: from-dot\n")
    assert load_config(cwd=cwd, env=env).model == "from-dot"
    explicit = write(tmp_path / "other.yaml", "model: explicit\n")
    assert load_config(explicit, cwd=cwd, env=env).model == "explicit"


def test_home_config_is_used_without_xdg(tmp_path: Path) -> None:
    write(tmp_path / ".config/mm/config.yaml", "maxTurns: 7\n")
    config = load_config(cwd=tmp_path / "nowhere", env={"HOME": str(tmp_path)})
    assert config.max_turns == 7


def test_environment_overrides_the_file_and_flags_override_both(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "baseURL: http://file/v1\nmodel: file-model\napiKey: k1\n")
    env = {"OPENAI_BASE_URL": "http://env/v1", "MM_MODEL": "env-model", "OPENAI_API_KEY": "k2"}
    config = load_config(path, cwd=tmp_path, env=env)
    assert (config.base_url, config.model, config.api_key) == ("http://env/v1", "env-model", "k2")
    flagged = load_config(
        path,
        cwd=tmp_path,
        env=env,
        overrides={"model": "flag-model", "yolo": True, "base_url": None},
    )
    assert (flagged.model, flagged.yolo, flagged.base_url) == ("flag-model", True, "http://env/v1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("model: m\nmaxOutput: lots\n", "line 2: key 'maxOutput': expected a whole number"),
        ("bashTool: yes please\n", "line 1: key 'bashTool': expected true or false"),
        ("model: m\n\nfrobnicate: 1\n", "line 3: key 'frobnicate': unknown key"),
        ("permissions: sometimes\n", 'line 1: key \'permissions\': expected "ask" or "allow"'),
        ("maxTurns: 0\n", "line 1: key 'maxTurns': expected a positive number"),
        ("temperature: .nan\n", "line 1: key 'temperature': expected a number from 0 to 2, got"),
        ("temperature: .inf\n", "line 1: key 'temperature': expected a number from 0 to 2, got"),
        ("temperature: -0.5\n", "line 1: key 'temperature': expected a number from 0 to 2, got"),
        ("temperature: 7\n", "line 1: key 'temperature': expected a number from 0 to 2, got 7"),
        ("model: [unclosed\n", "YAML syntax"),
        ("- just\n- a list\n", "line 1: expected a mapping of keys"),
        (
            "lsp:\n  servers:\n    a: {command: [pylsp], extensions: [.py]}\n"
            "    b: {command: [other], extensions: [.py]}\n",
            "line 4: key 'lsp.servers.b.extensions': extension .py is already served by a",
        ),
        ("lsp:\n  servers:\n    a: {extensions: [.py]}\n", "key 'lsp.servers.a.command'"),
    ],
)
def test_a_bad_file_names_the_file_the_line_and_the_key(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, Path("/p/.mm.yaml"))
    message = str(caught.value)
    assert message.startswith("config error in /p/.mm.yaml")
    assert expected in message and "\n" not in message


def test_lsp_servers_parse_and_an_absent_section_means_defaults() -> None:
    config = parse_config_text(
        "lsp:\n  servers:\n    pylsp:\n      command: [pylsp]\n      extensions: [py]\n"
        "      settings: {pylsp: {plugins: {}}}\n",
        Path("c.yaml"),
    )
    assert config.lsp_servers is not None
    [spec] = config.lsp_servers
    assert (spec.name, spec.command, spec.extensions) == ("pylsp", ("pylsp",), (".py",))
    assert spec.settings == {"pylsp": {"plugins": {}}}
    assert parse_config_text("model: m\n", Path("c.yaml")).lsp_servers is None


def test_an_empty_file_is_all_defaults_and_a_directory_is_an_error(tmp_path: Path) -> None:
    empty = write(tmp_path / "empty.yaml", "")
    assert load_config(empty, cwd=tmp_path, env={}).max_output == 10000
    folder = tmp_path / "dir.yaml"
    folder.mkdir()
    with pytest.raises(ConfigError, match="it is a directory"):
        load_config(folder, cwd=tmp_path, env={})
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml", cwd=tmp_path, env={})


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("lsp:\n  servers:\n    a: {command: [pylsp], extensions: .py}\n", "extensions"),
        ("lsp:\n  servers:\n    a: {command: pylsp --stdio, extensions: [.py]}\n", "command"),
        (
            "lsp:\n  servers:\n    a:\n      command: [x]\n      extensions: [.py]\n"
            "      rootMarkers: setup.py\n",
            "rootMarkers",
        ),
    ],
)
def test_a_string_where_a_list_is_expected_is_an_error_never_split(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, Path("c.yaml"))
    assert f"key 'lsp.servers.a.{key}': expected a list" in str(caught.value)


def test_every_problem_of_a_file_is_reported_at_once_one_line_each() -> None:
    text = (
        "maxOutput: lots\n"
        "bashTool: maybe\n"
        "frobnicate: 1\n"
        "lsp:\n"
        "  servers:\n"
        "    a: {command: [x], extensions: [.py], bogus: 1}\n"
        "    b: 3\n"
        "autoCompact: 2\n"
    )
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, Path("/p/c.yaml"))
    lines = str(caught.value).splitlines()
    assert lines == list(caught.value.problems)
    assert [line.split(":")[0] for line in lines] == [
        f"config error in /p/c.yaml line {n}" for n in (1, 2, 3, 6, 7, 8)
    ]
    assert "key 'maxOutput': expected a whole number" in lines[0]
    assert "key 'bashTool': expected true or false, got 'maybe'" in lines[1]
    assert "key 'frobnicate': unknown key" in lines[2]
    assert "key 'lsp.servers.a.bogus': unknown key" in lines[3]
    assert "key 'lsp.servers.b': expected {command" in lines[4]
    assert "key 'autoCompact': expected a fraction between 0 and 1, got 2" in lines[5]


def test_types_are_strict_and_a_key_given_twice_is_an_error() -> None:
    for text, expected in [
        ("maxTurns: true\n", "key 'maxTurns': expected a whole number, got True"),
        ("maxTurns: '7'\n", "key 'maxTurns': expected a whole number, got '7'"),
        ("yolo: 1\n", "key 'yolo': expected true or false, got 1"),
        ("model: a\nmodel: b\n", "line 2: key 'model': given twice (first on line 1)"),
        ("lsp:\n  servers:\n    1: {command: [x], extensions: [.py]}\n", "'lsp.servers.1'"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(expected)):
            parse_config_text(text, Path("c.yaml"))
    assert parse_config_text("temperature: 1\nmodel:\n", Path("c.yaml")).temperature == 1.0


def test_yaml_is_loaded_with_the_safe_loader_and_builds_no_python_objects(tmp_path: Path) -> None:
    assert yaml_source._Loader is getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    marker = tmp_path / "pwned"
    text = f"model: !!python/object/apply:os.system ['touch {marker}']\n"
    with pytest.raises(ConfigError, match="line 1"):
        parse_config_text(text, Path("c.yaml"))
    assert not marker.exists()


def test_alias_bombs_deep_nesting_and_huge_values_are_refused_quickly() -> None:
    # Quadratic work on these sizes takes hours: the suite's per-test timeout catches it,
    # with no timed assertion that a loaded machine could fail (bench/ measures speed).
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )
    for text, expected in [
        (bomb, "values once aliases are expanded"),
        ("a: &a [*a]\n", "nested deeper than"),
        ("model: " + "[" * 3000 + "]" * 3000 + "\n", "line 1"),
    ]:
        with pytest.raises(ConfigError, match=expected):
            parse_config_text(text, Path("c.yaml"))
    with pytest.raises(ConfigError) as caught:
        parse_config_text("model: [" + "x" * 100_000 + "]\n", Path("c.yaml"))
    assert len(str(caught.value)) < 200


def test_a_fifo_or_an_oversized_file_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    outcome: list[str] = []

    def load() -> None:
        try:
            load_config(fifo, cwd=tmp_path, env={})
        except ConfigError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # unblock the reader so the test ends, then fail
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO config blocked")
    assert outcome == [f"config error in {fifo}: not a regular file"]
    big = write(tmp_path / "big.yaml", "model: m\n" + "#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(ConfigError, match="larger than"):
        load_config(big, cwd=tmp_path, env={})


def test_the_user_config_is_found_through_the_shared_xdg_paths(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert config_candidates(tmp_path, env)[-1] == config_dir(env) / "config.yaml"


def test_the_cli_prints_every_problem_on_its_own_line(tmp_path: Path) -> None:
    (tmp_path / ".mm.yaml").write_text("maxOutput: lots\nyolo: 3\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    result = subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", "-p", "hi"],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("mm-tui: config error in ") for line in lines)
    assert "key 'maxOutput'" in lines[0] and "key 'yolo'" in lines[1]


def test_importing_the_config_loads_neither_yaml_nor_msgspec() -> None:
    code = (
        "import sys, mm_tui.agent.config\n"
        "print(sorted(m for m in ('yaml', 'msgspec') if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert shown.stdout.strip() == "[]", shown.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bashTimeout: soon\n", "line 1: key 'bashTimeout': expected a number of seconds, like 30"),
        ("bashTimeout: true\n", "line 1: key 'bashTimeout': expected a number of seconds"),
        ("bashTimeout: 0\n", "key 'bashTimeout': expected a number of seconds from 1 to 86400"),
        ("bashTimeout: -5\n", "key 'bashTimeout': expected a number of seconds from 1 to 86400"),
        ("bashTimeout: .nan\n", "key 'bashTimeout': expected a number of seconds from 1 to 86400"),
        ("bashTimeout: .inf\n", "key 'bashTimeout': expected a number of seconds from 1 to 86400"),
        ("bashTimeoutMax: 10m\n", "key 'bashTimeoutMax': expected a number of seconds, like 600"),
        (
            "model: m\nbashTimeoutMax: 20\n",
            "line 2: key 'bashTimeoutMax': 20 is below bashTimeout (30)",
        ),
        (
            "bashTimeout: 120\nbashTimeoutMax: 60\n",
            "line 2: key 'bashTimeoutMax': 60 is below bashTimeout (120)",
        ),
    ],
)
def test_a_bad_bash_time_limit_is_one_line_naming_the_key(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, Path("/p/.mm.yaml"))
    message = str(caught.value)
    assert message.startswith("config error in /p/.mm.yaml")
    assert expected in message and "\n" not in message


def test_the_bash_time_limits_default_to_the_seeds_thirty_seconds_and_ten_minutes() -> None:
    assert (Config().bash_timeout, Config().bash_timeout_max) == (30.0, 600.0)
    config = parse_config_text("bashTimeout: 90\nbashTimeoutMax: 3600\n", Path("/p/.mm.yaml"))
    assert (config.bash_timeout, config.bash_timeout_max) == (90.0, 3600.0)
    alone = parse_config_text("bashTimeout: 1.5\n", Path("/p/.mm.yaml"))
    assert (alone.bash_timeout, alone.bash_timeout_max) == (1.5, 600.0)


def test_a_bad_permission_rule_is_an_error_beside_an_lsp_section_too() -> None:
    # The lsp section's own problems once replaced the rules' ones: the bad rule was obeyed.
    for text in (
        "permissions: {allow: ['bash(git *']}\n",
        "permissions: {allow: ['bash(git *']}\nlsp: {servers: {}}\n",
    ):
        with pytest.raises(ConfigError) as caught:
            parse_config_text(text, Path("/p/.mm.yaml"))
        assert caught.value.problems == (
            "config error in /p/.mm.yaml line 1: key 'permissions.allow': "
            "'bash(git *' is not a rule like bash(git *) or write_file(src/**)",
        )


def test_the_debug_log_shows_the_settings_set_by_their_keys_never_the_api_key() -> None:
    config = parse_config_text(
        "baseURL: http://me:pw@h:1/v1\napiKey: sk-secret\nmaxTurns: 3\nbashTool: false\n",
        Path("/p/.mm.yaml"),
    )
    assert repr(config) == (
        "Config(baseURL='http://me:***@h:1/v1', bashTool=False, maxTurns=3, source=/p/.mm.yaml)"
    )
    assert repr(Config()) == "Config(source=None)"
