"""Secrets that a program takes as a positional word or under an option whose name says nothing:
`docker login -p KEY` (NGC's instructions for nvcr.io), `sshpass -p`, `mysql -pPW`, `redis-cli -a`,
`curl -u user:PW`, `wandb login KEY`, openssl's `pass:PW`, `aws configure set ... KEY` and a key echoed
into a login. They were printed whole wherever a command line reaches a report (`pgdoctor run`'s job,
`hang`'s process list, a log that echoes its launch command). The same options of other programs (a
port, a path, an archive flag) stay as they are."""

from __future__ import annotations

import pytest

from pgdoctor.model.redact import redact_text, scrub

SECRET = "hunter2Zq9"
KEY40 = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"docker login -u bob -p {SECRET} registry.example.com", SECRET),
        (f"docker login nvcr.io --username='$oauthtoken' -p {SECRET}", SECRET),
        (f"podman login -u bob -p={SECRET} quay.io", SECRET),
        (f"helm registry login r.io -u bob -p '{SECRET}'", SECRET),
        (f"az login -u a@b.com -p {SECRET}", SECRET),
        (f"sshpass -p {SECRET} ssh node1 nvidia-smi", SECRET),
        (f"sshpass -p'{SECRET}' scp a node1:b", SECRET),
        (f"mysql -h db -u root -p{SECRET} runs", SECRET),
        (f'mysqldump -u root -p"{SECRET}" runs', SECRET),
        (f"redis-cli -h cache -a {SECRET} ping", SECRET),
        (f"curl -fsS -u alice:{SECRET} https://artifacts.example.com/ckpt.pt", SECRET),
        (f"curl --user 'alice:{SECRET}' https://x.example.com", SECRET),
        (f"wandb login {KEY40}", KEY40),
        (f"wandb login --relogin --host https://wandb.example.com local-{KEY40}", KEY40),
        (f"openssl enc -d -aes-256-cbc -in ckpt.enc -passin pass:{SECRET}", SECRET),
        (f"aws configure set aws_secret_access_key {SECRET}", SECRET),
        (f"aws configure set profile.train.aws_session_token {SECRET}", SECRET),
        (f"echo {KEY40} | wandb login", KEY40),
        (f"echo {SECRET} | docker login -u bob --password-stdin ghcr.io", SECRET),
        (f"printf '%s' {SECRET} | sudo docker login -u bob --password-stdin", SECRET),
        (f"+ srun bash -c 'sshpass -p {SECRET} ssh $HOST; torchrun train.py'", SECRET),
    ],
)
def test_a_positional_secret_is_masked(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and "<redacted>" in out, out
    assert scrub({"argv": text})["argv"] == out


@pytest.mark.parametrize(
    "text",
    [
        "torchrun --nproc_per_node 8 train.py -p 29500",
        "ssh -p 2222 node1 nvidia-smi",
        "docker run -p 8080:80 trainer:latest",
        "rsync -a ckpt/ node1:ckpt/",
        "curl -u alice https://x.example.com",  # curl asks for the password
        "mysql -u root -p runs",  # mysql asks for the password
        "wandb login",
        "wandb login --relogin",
        "echo $CR_PAT | docker login ghcr.io -u bob --password-stdin",  # a variable, not its value
        "python -m mysql_tools -p 5",
    ],
)
def test_the_same_options_of_other_commands_stay(text: str) -> None:
    assert redact_text(text) == text
