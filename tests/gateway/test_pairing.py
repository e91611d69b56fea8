"""Pairing codes: 8 characters, one hour, the same code when asked again, approval by
code, a lockout after 5 wrong codes, revocation; and `seam pairing` on the command line."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from seam.apps.gateway.pairing import ALPHABET, CODE_TTL, LOCKOUT, PairingError, PairingStore
from tests.support.in_process import run_seam


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_code_is_8_unambiguous_characters_and_stays_the_same_for_an_hour(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = PairingStore(tmp_path / "pairing.json", clock=clock)
    first = store.request("telegram", "99", "Ann", "telegram:99")
    assert len(first.code) == 8 and set(first.code) <= set(ALPHABET)
    clock.now += CODE_TTL - 1
    assert store.request("telegram", "99", "Ann", "telegram:99").code == first.code
    clock.now += 2
    assert store.pending() == []
    assert store.request("telegram", "99", "Ann", "telegram:99").code != first.code
    mode = stat.S_IMODE(os.stat(tmp_path / "pairing.json").st_mode)
    assert mode == 0o600


def test_approving_a_code_pairs_its_user_on_its_platform_only(tmp_path: Path) -> None:
    store = PairingStore(tmp_path / "pairing.json")
    code = store.request("telegram", "99", "Ann", "telegram:99").code
    user = store.approve(code.lower())
    assert user.ref == "telegram:99"
    assert store.is_paired("telegram", "99")
    assert not store.is_paired("slack", "99")
    assert store.pending() == []
    with pytest.raises(PairingError, match="not a pairing code"):
        store.approve(code)  # used up
    assert [u.ref for u in store.revoke("99")] == ["telegram:99"]
    assert not store.is_paired("telegram", "99")


def test_five_wrong_codes_lock_the_approver_out_for_15_minutes(tmp_path: Path) -> None:
    clock = Clock()
    store = PairingStore(tmp_path / "pairing.json", clock=clock)
    code = store.request("telegram", "99", "Ann", "telegram:99").code
    for _ in range(5):
        with pytest.raises(PairingError, match="before a 15 min lockout"):
            store.approve("WRONG234", by="guesser")
    with pytest.raises(PairingError, match="too many wrong codes"):
        store.approve(code, by="guesser")  # even the right one, while locked out
    assert store.approve(code, by="someone-else").ref == "telegram:99"
    code2 = store.request("telegram", "5", "Bo", "telegram:5").code
    clock.now += LOCKOUT + 1
    assert store.approve(code2, by="guesser").ref == "telegram:5"


def test_an_expired_code_is_refused(tmp_path: Path) -> None:
    clock = Clock()
    store = PairingStore(tmp_path / "pairing.json", clock=clock)
    code = store.request("telegram", "99", "Ann", "telegram:99").code
    clock.now += CODE_TTL + 1
    with pytest.raises(PairingError, match="expired"):
        store.approve(code)
    assert not store.is_paired("telegram", "99")


def test_seam_pairing_list_approve_revoke(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "SEAM_HOME": str(home), "HOME": str(tmp_path)}
    code = PairingStore(home / "pairing.json").request("telegram", "99", "Ann", "x").code

    def seam(*args: str) -> subprocess.CompletedProcess[str]:
        # In this process: the command's answers are checked, not its process.
        return run_seam(["pairing", *args], env=env, cwd=tmp_path)

    listed = seam("list")
    assert listed.returncode == 0 and code in listed.stdout and "telegram:99" in listed.stdout
    wrong = seam("approve", "NOPE2345")
    assert wrong.returncode == 1 and "not a pairing code" in wrong.stderr
    approved = seam("approve", code)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == "approved telegram:99 (Ann)\n"
    assert "paired\ttelegram:99\tAnn" in seam("list").stdout
    assert seam("revoke", "telegram:99").stdout == "revoked telegram:99\n"
    gone = seam("revoke", "telegram:99")
    assert gone.returncode == 1 and "is not paired" in gone.stderr
