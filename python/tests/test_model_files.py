"""Model files in exactly the CLI's formats, pickling through the same bytes, and the CLI's
`bulwark predict` against Python on the same file."""

import json
import os
import pickle
import shutil
import subprocess
from pathlib import Path

import bulwark
import joblib
import numpy as np
import pytest
from bulwark.exceptions import InputError, ParameterError

ROOT = Path(__file__).resolve().parents[2]


def _cli():
    """The `bulwark` binary: $BULWARK_CLI (what .ci/run sets), else a build in target/."""
    env = os.environ.get("BULWARK_CLI")
    if env:
        return env
    for p in (ROOT / "target/debug/bulwark", ROOT / "target/release/bulwark"):
        if p.exists():
            return str(p)
    return shutil.which("bulwark")


@pytest.mark.parametrize("ext", ["json", "bin"])
@pytest.mark.parametrize("cls", [bulwark.LP, bulwark.SVM, bulwark.AmlcSmoothBoost, bulwark.MGURU])
def test_save_load_and_pickle_predict_identically(tmp_path, blobs, ext, cls):
    X, y = blobs
    kw = {"weak": "average", "gamma": 0.01} if cls is bulwark.AmlcSmoothBoost else {}
    est = cls(**kw).fit(X / 4, y)
    path = tmp_path / f"m.{ext}"
    est.save(path)
    assert path.read_bytes() == est.to_bytes(ext)
    back = bulwark.load(path)
    assert type(back) is cls
    assert list(back.classes_) == ["ham", "spam"]
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    # the file read back writes the same bytes (nothing lost, nothing added)
    assert back.to_bytes(ext) == path.read_bytes()
    for restored in (pickle.loads(pickle.dumps(est)), bulwark.from_bytes(est.to_bytes(ext))):
        np.testing.assert_array_equal(restored.decision_function(X), est.decision_function(X))
    joblib.dump(est, tmp_path / "m.joblib")
    np.testing.assert_array_equal(
        joblib.load(tmp_path / "m.joblib").predict(X), est.predict(X)
    )
    # a pickled estimator keeps the original label type
    assert pickle.loads(pickle.dumps(est)).classes_.dtype == est.classes_.dtype


def test_json_file_is_the_cli_format(tmp_path, blobs):
    X, y = blobs
    bulwark.LP(C=0.5).fit(X, y).save(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["format"] == "bulwark-model"
    assert doc["format_version"] == bulwark._native.MODEL_FORMAT_VERSION
    assert doc["algorithm"] == "lp"
    assert doc["hyper_parameters"]["C"] == 0.5
    assert doc["training"]["classes"] == ["ham", "spam"]
    assert len(doc["weights"]) == 4 and doc["corruption_stats"] is not None


def test_bad_files_are_typed_errors(tmp_path, blobs):
    with pytest.raises(ParameterError, match=".json.*or .bin"):
        bulwark.LP().fit(*blobs).save(tmp_path / "m.txt")
    (tmp_path / "bad.json").write_text('{"format": "bulwark-model", "format_version": 99}')
    with pytest.raises(InputError, match="version 99"):
        bulwark.load(tmp_path / "bad.json")
    (tmp_path / "bad.bin").write_bytes(b"BULWARK\0\x03\0\0\0\xff\xff")
    with pytest.raises(InputError, match="corrupted or truncated"):
        bulwark.load(tmp_path / "bad.bin")
    with pytest.raises(FileNotFoundError):
        bulwark.load(tmp_path / "missing.json")
    with pytest.raises(InputError):
        bulwark.from_bytes(b"not a model")


def _csv(path, X, y):
    cols = ",".join(f"f{j}" for j in range(X.shape[1]))
    lines = [f"label,{cols}"]
    for row, label in zip(X, y):
        lines.append(label + "," + ",".join(repr(float(v)) for v in row))
    path.write_text("\n".join(lines) + "\n")


def _cli_scores(cli, model, data):
    out = subprocess.run(
        [cli, "predict", "-q", "--model", str(model), "--data", str(data), "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return np.array([p["score"] for p in json.loads(out)["predictions"]])


def test_cli_predict_and_python_agree(tmp_path, blobs):
    cli = _cli()
    if cli is None:
        pytest.skip("no `bulwark` CLI built (cargo build, or set BULWARK_CLI)")
    X, y = blobs
    rng = np.random.default_rng(5)
    X = X * rng.uniform(0.5, 20.0, size=X.shape[1]) + rng.uniform(-3, 3, size=X.shape[1])
    data = tmp_path / "d.csv"
    _csv(data, X, y)
    # Python -> file -> CLI
    for ext in ("json", "bin"):
        est = bulwark.LP().fit(X, y)
        est.save(tmp_path / f"py.{ext}")
        np.testing.assert_allclose(
            _cli_scores(cli, tmp_path / f"py.{ext}", data), est.decision_function(X), rtol=1e-9
        )
    # CLI (with its stored scaling) -> file -> Python
    for algo, scale in (("lp", "standard"), ("svm", "minmax"), ("logreg", None)):
        model = tmp_path / f"cli-{algo}.bin"
        args = [cli, "train", "-q", "--algo", algo, "--data", str(data), "--out", str(model)]
        subprocess.run(args + (["--scale", scale] if scale else []), check=True)
        est = bulwark.load(model)
        assert est._model.scaled == (scale is not None)
        np.testing.assert_allclose(
            est.decision_function(X), _cli_scores(cli, model, data), rtol=1e-9
        )
        labels = np.where(_cli_scores(cli, model, data) > 0, est.classes_[1], est.classes_[0])
        np.testing.assert_array_equal(est.predict(X), labels)
