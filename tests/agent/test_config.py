"""Configuration (SPEC §2): discovery, overrides, validation with file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from mm_tui.agent.config import Config, ConfigError, load_config, parse_config_text


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
