from __future__ import annotations

import pytest

from totem.policy.shell_parse import forbidden, split_commands


@pytest.mark.parametrize(
    ("line", "commands"),
    [
        ("ls -la", ["ls -la"]),
        ("", []),
        ("cat a | grep b | wc -l", ["cat a", "grep b", "wc -l"]),
        ("make && make test || echo failed; ls", ["make", "make test", "echo failed", "ls"]),
        ("echo a&&echo b", ["echo a", "echo b"]),
        ("npm run dev & sleep 1", ["npm run dev", "sleep 1"]),
        ("cd src\npytest -q\n", ["cd src", "pytest -q"]),
        ("(cd sub && make)", ["cd sub", "make"]),
        ("echo $(git rev-parse HEAD)", ["echo $(git rev-parse HEAD)", "git rev-parse HEAD"]),
        ('echo "now: $(date +%s)"', ["echo now: $(date +%s)", "date +%s"]),
        ("echo `whoami`", ["echo `whoami`", "whoami"]),
        ("diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"]),
        ("echo $((1 + 2))", ["echo $((1 + 2))"]),
        ("echo 'a; rm -rf /' \"b && c\"", ["echo a; rm -rf / b && c"]),
        ("r''m -rf \\/", ["rm -rf /"]),
        ("env FOO=1 BAR=2 python x.py", ["python x.py"]),
        ("FOO=1 python x.py", ["python x.py"]),
        ("env -u HOME -i ls", ["ls"]),
        ("sudo rm -rf /tmp/x", ["sudo rm -rf /tmp/x", "rm -rf /tmp/x"]),
        ("sudo -u www bash -c 'id'", ["sudo -u www bash -c id", "id"]),
        ("timeout 10 pytest", ["pytest"]),
        ("timeout -s KILL --preserve-status 5 make", ["make"]),
        ("nice -n 5 make", ["make"]),
        ("nice -5 make", ["make"]),
        ("nohup ./server &", ["./server"]),
        ("find . -name '*.pyc' | xargs -0 -n 1 rm -f", ["find . -name *.pyc", "rm -f"]),
        ("ls | xargs", ["ls", "xargs"]),
        ("bash -c 'git status && git push'", ["git status", "git push"]),
        ('sh -ec "cd x; make"', ["cd x", "make"]),
        ("bash script.sh", ["bash script.sh"]),
        ("eval 'rm -rf build'", ["rm -rf build"]),
        ("timeout 5 env A=1 bash -lc 'nohup git push'", ["git push"]),
        ("ls > out.txt 2>&1", ["ls > out.txt 2>&1"]),
        ("ls &> /dev/null && echo ok", ["ls &> /dev/null", "echo ok"]),
        ("ls # rm -rf /", ["ls"]),
        ("echo a \\\n  b", ["echo a b"]),
        ("cat <<EOF > f.txt\nrm -rf /\nEOF\necho done", ["cat << EOF > f.txt", "echo done"]),
        ("cat <<-'END'\n\trm x\n\tEND\nls", ["cat <<- END", "ls"]),
        ("for f in *.py; do black $f; done", ["black $f"]),
        ("if test -f x; then rm x; else touch x; fi", ["test -f x", "rm x", "touch x"]),
        ("while read l; do echo $l; done < f", ["read l", "echo $l"]),
        ("{ echo a; echo b; } > f", ["echo a", "echo b"]),
        ("ls; ls", ["ls"]),
    ],
)
def test_split_commands(line: str, commands: list[str]) -> None:
    assert split_commands(line) == commands


def test_deep_nesting_stops() -> None:
    line = "bash -c " + "'bash -c " * 12 + "ls"
    assert split_commands(line)  # terminates, returns something


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ("rm -rf /", "rm -rf /*"),
        ("rm -rf /home/user", "rm -rf /*"),
        ("cd / && rm -rf /", "rm -rf /*"),
        ("sudo rm -rf /", "rm -rf /*"),
        ("echo x | bash -c 'rm -rf /etc'", "rm -rf /*"),
        ("/bin/rm -rf /", "rm -rf /*"),
        ("r\\m -rf '/'", "rm -rf /*"),
        ("git push origin main", "git push *"),
        ("git push", "git push *"),
        ("timeout 5 git   push --force", "git push *"),
        ("echo $(sudo reboot)", "sudo *"),
    ],
)
def test_forbidden_refuses(line: str, pattern: str) -> None:
    message = forbidden(split_commands(line), ["curl *", pattern])
    assert message is not None
    assert f"matches `{pattern}`" in message
    assert "Do not run it" in message


@pytest.mark.parametrize(
    "line",
    ["rm -rf build", "git pushd", "git status && git log", "echo 'rm -rf /'", "git  stash push"],
)
def test_forbidden_allows(line: str) -> None:
    assert forbidden(split_commands(line), ["rm -rf /*", "git push *"]) is None
