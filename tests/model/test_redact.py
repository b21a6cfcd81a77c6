"""Secrets never reach a snapshot, a report or evidence."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgdoctor.model import Evidence, Finding, Measurement, ProbeResult, Report, Severity, Snapshot, Status
from pgdoctor.model.redact import REDACTED, redact_env, redact_text

SECRETS = {
    "HF_TOKEN": "hf_abcdefSECRET1",
    "WANDB_API_KEY": "k3y-SECRET2",
    "DB_PASSWORD": "pw-SECRET3",
    "NCCL_AUTH_SECRET": "SECRET4",
    "AWS_SESSION_TOKEN": "SECRET5",
    "MY_CREDENTIALS": "SECRET6",
}


@pytest.mark.parametrize(
    ("text", "leak"),
    [
        ("torchrun --master_addr x train.py HF_TOKEN=hf_abcdefSECRET1 --lr 3e-4", "hf_abcdefSECRET1"),
        ("pip install --index-url https://alice:SECRETPW@pypi.example.com/simple torch", "SECRETPW"),
        ("export WANDB_API_KEY=k3y-SECRET2; python train.py", "k3y-SECRET2"),
        ("git clone https://oauth2:glpat-SECRET@gitlab.example.com/x.git", "glpat-SECRET"),
    ],
)
def test_secrets_in_command_and_log_lines_are_masked(text: str, leak: str) -> None:
    out = redact_text(text)
    assert leak not in out and REDACTED in out
    assert "train.py" in out or "torch" in out or "x.git" in out  # the rest of the line survives


def test_ordinary_assignments_survive() -> None:
    line = "NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=eth0 MASTER_PORT=29500"
    assert redact_text(line) == line


def test_env_values_of_credential_names_are_redacted() -> None:
    assert set(redact_env(SECRETS).values()) == {REDACTED}


def test_report_and_snapshot_json_carry_no_secret_from_any_field() -> None:
    m = Measurement("env.vars", {"NCCL_DEBUG": "INFO", "HF_TOKEN": "hf_abcdefSECRET1"})
    m2 = Measurement("proc.cmdline", "python train.py --token-url https://u:SECRETPW@h/x")
    snap = Snapshot("h", 0.0, "0", "quick", (ProbeResult("p", "host", Status.PASSED, measurements=(m, m2)),))
    finding = Finding(
        "ENV401",
        "x",
        Severity.FAIL,
        "configuration",
        "t",
        "saw WANDB_API_KEY=k3y-SECRET2",
        "knobs",
        evidence=(Evidence("DB_PASSWORD=pw-SECRET3 in env", file="log.txt", line=3),),
        facts={"cmd": "export AWS_SESSION_TOKEN=SECRET5"},
    )
    report = Report("check", snap, (finding,))
    text = json.dumps(report.to_json()) + snap.dumps()
    for secret in ("hf_abcdefSECRET1", "SECRETPW", "k3y-SECRET2", "pw-SECRET3", "SECRET5"):
        assert secret not in text
    # Structure survives: pgdoctor's own keys are not mistaken for credential names.
    back = Snapshot.loads(snap.dumps())
    assert [m.key for m in back.measurements()] == ["env.vars", "proc.cmdline"]
    assert back.value("env.vars")["NCCL_DEBUG"] == "INFO"
    assert report.to_json()["findings"][0]["evidence"][0]["file"] == "log.txt"


def test_collect_never_writes_a_credential(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "s.json"
    env = {"PATH": "/usr/bin:/bin", **SECRETS, "NCCL_DEBUG": "INFO", "TORCH_CREDENTIAL_HELPER": "SECRET7"}
    proc = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "collect", "--level", "quick", "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    for secret in [*SECRETS.values(), "SECRET7"]:
        assert secret not in text
    assert '"NCCL_DEBUG": "INFO"' in text


def test_every_output_format_is_redacted() -> None:
    import io

    from pgdoctor.render import FORMATS, get_renderer

    m = Measurement("proc.cmdline", "python train.py --hub-url https://u:SECRETPW@h/x")
    snap = Snapshot("h", 0.0, "0", "quick", (ProbeResult("p", "host", Status.PASSED, measurements=(m,)),))
    finding = Finding(
        "ENV401",
        "socket-ifname-no-match",
        Severity.FAIL,
        "configuration",
        "t",
        "saw WANDB_API_KEY=k3y-SECRET2",
        "knobs",
        evidence=(Evidence("export HF_TOKEN=hf_abcdefSECRET1", file="log.txt", line=3),),
    )
    report = Report("check", snap, (finding,))
    for fmt in FORMATS:
        out = io.StringIO()
        get_renderer(fmt)(report, out, False)
        for secret in ("SECRETPW", "k3y-SECRET2", "hf_abcdefSECRET1"):
            assert secret not in out.getvalue(), f"{fmt} leaks {secret}"


# Every shape of credential the hostile-input campaign leaked, with SECRET standing for the value.
SHAPES = [
    "Authorization: Bearer {s}",
    "curl -H 'Proxy-Authorization: Basic {s}' https://x",
    "python train.py --token {s} --lr 1e-4",
    "accelerate launch run.py --hf_token {s}",
    "deepspeed --api-key={s} train.py",
    "git clone https://ghp_{s}@github.com/org/repo.git",
    '{{"HF_TOKEN": "{s}", "NCCL_DEBUG": "INFO"}}',
    "WANDB_API_KEY='{s} with spaces' python x.py",
    "pip install --index-url https://alice:p@ss/w{s}@pypi.example.com/simple torch",
    "rsync -a alice:{s}@backup.example.com:/ckpt .",
    "export HF_TOKEN={s}",
    # Found by the hostile-input sweep: a secret pair inside a harmless name's value, a JWT's
    # signature, a Slack webhook's path.
    "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountKey={s};EndpointSuffix=core.windows.net",
    "Server=db.example.com;User Id=sa;Password={s};",
    "Authorization failed for eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.{s}",
    "POST https://hooks.slack.com/services/T0000/B0000/{s} failed",
]
TOKEN_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SHAPES), st.text(alphabet=TOKEN_CHARS, min_size=12, max_size=40))
def test_every_secret_shape_is_masked_in_free_text(shape: str, value: str) -> None:
    secret = "SECRET" + value
    out = redact_text(shape.format(s=secret))
    assert secret not in out and value not in out, out
    assert REDACTED in out


@pytest.mark.parametrize(
    "token",
    [
        "ASIAQ9VSECRETXYZ0123",  # AWS temporary (STS) key id, as AKIA
        "AIzaSyD-SECRET_0123456789abcdefghijklmno",  # Google API key
        "npm_SECRET0123456789abcdefghijklmnopqrst",  # npm token
    ],
)
def test_tokens_of_fixed_shape_are_masked_wherever_they_stand(token: str) -> None:
    # They leaked: none of them has a name or a flag before it.
    for line in (f"using {token} for the upload", f"key={token}", f"'{token}'"):
        assert token not in redact_text(line), line


@pytest.mark.parametrize("fmt", ["console", "json", "junit", "prometheus", "html"])
def test_no_secret_shape_reaches_any_output_format_or_the_snapshot(fmt: str) -> None:
    import io

    from pgdoctor.render import get_renderer

    lines = [shape.format(s=f"SECRET{i}xyzzy{i}abcdefgh") for i, shape in enumerate(SHAPES)]
    m = Measurement("proc.cmdline", "\n".join(lines))
    snap = Snapshot("h", 0.0, "0", "quick", (ProbeResult("p", "host", Status.PASSED, measurements=(m,)),))
    findings = tuple(
        Finding(
            "ENV401",
            "x",
            Severity.FAIL,
            "configuration",
            "t",
            line,
            "knobs",
            evidence=(Evidence(line, file="log.txt", line=i),),
            facts={"line": line},
        )
        for i, line in enumerate(lines)
    )
    out = io.StringIO()
    get_renderer(fmt)(Report("check", snap, findings), out, False)
    text = out.getvalue() + snap.dumps()
    for i in range(len(SHAPES)):
        assert f"SECRET{i}xyzzy" not in text, (fmt, SHAPES[i])
