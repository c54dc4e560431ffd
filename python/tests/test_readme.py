"""The README's Python example runs as written."""

import os
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs(tmp_path, capsys):
    text = README.read_text()
    section = text[text.index("## Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "accuracy under deletion of 2 features" in out
    assert (tmp_path / "wdbc-lp.bin").exists()


def test_stubs_are_current():
    import bulwark
    from bulwark._stubs import render

    stub = Path(bulwark.__file__).with_name("__init__.pyi")
    assert stub.read_text() == render(), "regenerate: python -m bulwark._stubs > __init__.pyi"
