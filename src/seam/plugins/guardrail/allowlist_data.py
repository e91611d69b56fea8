"""The allowlist's tables, pure rule data: which check judges each program, the programs
that are never harmless, and the per-tool subcommand tables. No logic beyond building
the literal tables (the checks live in `programs/`)."""

from __future__ import annotations

from seam.plugins.guardrail.normalize import SHELLS
from seam.plugins.guardrail.programs.base import (
    READ,
    RUN,
    RUNS,
    Check,
    all_of,
    formatter,
    no_prefix,
    plain,
    subcommands,
    writes_if,
)
from seam.plugins.guardrail.programs.build import cargo, make, ruff
from seam.plugins.guardrail.programs.files import (
    date,
    find,
    less,
    mkdir,
    no_operands,
    ps,
    rm,
    sort,
    tar,
    uniq,
    unzip,
    xxd,
    yq,
)
from seam.plugins.guardrail.programs.git import git
from seam.plugins.guardrail.programs.interpreters import (
    bun,
    compiler,
    deno,
    js_package_manager,
    npx,
    script_language,
)
from seam.plugins.guardrail.programs.shell_builtins import (
    declare,
    env,
    fc,
    history,
    shell_command,
    shell_program,
    shell_set,
    source,
    unset,
)
from seam.plugins.guardrail.programs.system import (
    crontab,
    curl,
    docker,
    gh,
    ip,
    journalctl,
    kill,
    openssl,
    partitions,
    sql_client,
    ssh,
)
from seam.plugins.guardrail.programs.text import awk, sed

_GO = subcommands(
    {
        **all_of(RUN, "build", "test", "run", "vet", "generate"),
        **all_of("write", "fmt", "mod", "get", "install", "work"),
        **all_of(READ, "version", "env", "list", "doc", "help"),
        "clean": "write",
    }
)
_NPM = subcommands(
    {
        **all_of(RUN, "test", "t", "run", "run-script", "start", "build", "exec", "why"),
        **all_of("write", "install", "i", "ci", "add", "uninstall", "remove", "rm", "update"),
        **all_of("write", "up", "init", "link", "rebuild", "prune", "dedupe", "pack", "create"),
        **all_of("write", "dlx", "audit"),
        **all_of(READ, "ls", "list", "version", "--version", "-v", "help", "root", "bin"),
        **all_of(RUN, "outdated", "view", "info", "doctor", "whoami", "search", "prefix"),
        **all_of(RUN, "dev", "lint", "format", "serve", "preview", "typecheck", "check"),
    },
    values=frozenset({"--prefix", "-C", "--dir", "-w", "--workspace", "--filter", "--cwd"}),
)
_PIP = subcommands(
    {
        **all_of("write", "install", "uninstall", "download", "wheel"),
        **all_of(READ, "list", "show", "freeze", "check", "help", "--version"),
        **all_of(READ, "inspect", "debug", "hash", "-V", "cache"),
        **all_of(RUN, "search", "index"),
    },
    values=frozenset({"--python", "--log", "--cache-dir", "--proxy", "--retries", "--timeout"}),
)
_UV = subcommands(
    {
        **all_of(RUN, "run", "build", "export", "tree"),
        **all_of("write", "sync", "pip", "add", "remove", "lock", "venv", "init", "tool"),
        **all_of("write", "python", "version", "self", "cache"),
        **all_of(READ, "--version", "help"),
    },
    values=frozenset({"--directory", "--project", "--python", "-p", "--with", "--package"}),
)
_POETRY = subcommands(
    {
        **all_of(RUN, "run", "build"),
        **all_of("write", "install", "add", "remove", "lock", "update", "shell", "sync"),
        **all_of(READ, "show", "check", "env", "version", "--version", "about", "search"),
        "init": "write",
        "new": "write",
    },
    values=frozenset({"-C", "--directory", "-P", "--project"}),
)
_BREW = subcommands(
    {
        **all_of("write", "install", "reinstall", "upgrade", "update", "uninstall", "remove"),
        **all_of(READ, "list", "ls", "deps", "--version", "config", "leaves", "--prefix"),
        **all_of(RUN, "info", "search", "outdated", "doctor", "home", "desc"),
    }
)
_APT = subcommands(
    {
        **all_of("write", "install", "update", "upgrade", "remove", "purge", "autoremove"),
        **all_of(READ, "list", "search", "show", "policy", "depends", "rdepends", "madison"),
    },
    values=frozenset({"-o", "-c", "-t"}),
)
_TERRAFORM = subcommands(
    {
        **all_of(RUN, "plan", "validate", "providers", "graph", "test"),
        **all_of("write", "init", "fmt", "get"),
        **all_of(READ, "show", "output", "version", "-version", "--version", "state", "help"),
    },
    values=frozenset({"-chdir"}),
)
_KUBECTL_READ = ("get", "describe", "logs", "explain", "top", "version", "api-resources")
_KUBECTL = subcommands(
    {
        # They ask a cluster over the network: never read-only.
        **all_of(RUN, *_KUBECTL_READ, "config", "cluster-info", "api-versions", "events"),
        **all_of(RUN, "port-forward", "exec", "diff", "wait", "kustomize"),
        **all_of("write", "apply", "rollout"),
    },
    values=frozenset({"-n", "--namespace", "--context", "--kubeconfig", "-l", "--selector"}),
)
_HELM = subcommands(
    {
        **all_of(RUN, "list", "ls", "status", "template", "lint", "show", "search", "version"),
        **all_of(RUN, "history", "get", "env"),
        **all_of("write", "install", "upgrade", "repo", "dependency", "pull", "package"),
    },
    values=frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig"}),
)
_GEM = subcommands(
    {**all_of("write", "install", "update", "uninstall", "build"), **all_of(READ, "list", "info")}
)
_BUNDLE = subcommands(
    {
        **all_of("write", "install", "update", "add", "lock"),
        **all_of(RUN, "exec"),
        **all_of(READ, "list", "info"),
    }
)
_SYSTEMCTL = subcommands(
    {
        **all_of(READ, "status", "show", "list-units", "list-unit-files", "list-timers"),
        **all_of(READ, "is-active", "is-enabled", "is-failed", "cat", "list-dependencies"),
        **all_of(READ, "--version", "help", "list-sockets", "list-jobs"),
    },
    values=frozenset({"-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property"}),
)


_READERS = (
    "ls", "ll", "la", "dir", "vdir", "pwd", "cd", "pushd", "popd", "dirs", "tree", "cat",
    "tac", "nl", "head", "tail", "more", "wc", "du", "df", "file", "stat", "which", "type",
    "whereis", "whatis", "echo", "printf", "printenv", "whoami", "uname", "uptime", "id",
    "groups", "grep", "egrep", "fgrep", "zgrep", "cut", "tr", "paste", "join", "column",
    "comm", "fold", "fmt", "expand", "unexpand", "rev", "strings", "od", "hexdump", "diff",
    "cmp", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum",
    "cksum", "sum", "basename", "dirname", "realpath", "readlink", "true", "false", ":",
    "sleep", "test", "[", "[[", "seq", "expr", "nproc", "free", "pgrep", "top",
    "htop", "jobs", "lsof", "netstat", "ss", "getent", "locale", "tty", "arch", "jq",
    "base32", "zcat", "bzcat", "xzcat", "zless", "cal", "factor", "numfmt", "look", "w",
    "who", "last", "lscpu", "lsblk", "lsusb", "lspci", "vmstat", "iostat", "pstree",
    "envsubst", "dos2unix", "unix2dos", "read", "wait", "shift", "return", "exit", "break",
    "continue", "getopts", "umask", "ulimit", "times", "caller", "disown", "bg", "fg",
    "shopt", "tput", "clear", "reset", "stty", "nm",
    "objdump", "readelf", "size", "python3-config", "pkg-config", "help",
    "uuidgen", "tsort", "pr", "csvlook", "exa", "eza", "lsd", "dust", "duf", "watch",
    "xargs", "timeout", "nice", "nohup", "stdbuf", "ionice", "env", "builtin", "busybox",
    "toybox", "unbuffer", "flock", "pv", "systemd-analyze",
    "lsmod", "fc-list", "sqlite3_analyzer", "wl-paste", "pbpaste", "say", "notify-send",
)  # fmt: skip
_WRITERS = (
    "touch", "mkdir", "rmdir", "cp", "mv", "ln", "chmod", "chown", "chgrp", "tee",
    "truncate", "csplit", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd",
    "unzstd", "lz4", "7z", "7za", "unrar", "install", "mkfifo", "dd", "unlink", "cpio",
    "wl-copy", "pbcopy", "dos2unix",
)  # fmt: skip
# Programs that reach the network: harmless inside a sandbox, never read-only (a lookup of
# `$(cat .env).example.com` sends what it reads).
_NETWORK = (
    "ping", "ping6", "dig", "nslookup", "host", "traceroute", "tracepath", "mtr", "whois",
    "nc", "ncat", "netcat", "telnet", "ftp", "sftp",
)  # fmt: skip
_RUNNERS = (
    "pytest", "py.test", "tox", "nox", "ruff", "mypy", "black", "isort", "flake8", "pylint",
    "pyright", "pyflakes", "pycodestyle", "bandit", "coverage", "eslint", "prettier", "tsc",
    "jest", "vitest", "mocha", "ava", "playwright", "cypress", "webpack", "vite", "rollup",
    "esbuild", "turbo", "pre-commit", "ninja", "meson", "ctest", "cpack", "rustc",
    "rustfmt", "javac", "java", "mvn", "gradle", "dotnet", "swiftc", "zig", "nim", "cabal",
    "stack", "rebar3", "dart", "flutter", "code", "open", "xdg-open", "gofmt",
    "golangci-lint", "staticcheck", "hatch", "pdm", "pipx", "conda", "mamba", "pipenv",
    "rye", "maturin", "twine", "sphinx-build", "mkdocs", "jupyter", "composer", "phpunit",
    "rspec", "rake", "shellcheck", "shfmt", "hadolint", "actionlint", "yamllint",
    "markdownlint", "codespell", "clang-format", "clang-tidy", "cppcheck", "ab", "wrk",
    "ffmpeg", "ffprobe", "typst", "buf", "sqlc", "alembic", "flask", "uvicorn", "gunicorn",
    "celery", "streamlit", "bazel", "buck2", "pants", "scons", "autoreconf", "automake",
    "autoconf", "libtool", "corepack",
)  # fmt: skip

_MAN_RUNS = (
    "-P", "--pager", "-H", "--html", "-p", "--preprocessor", "-l", "-C", "--config-file",
    "--browser", "-X", "--gxditview", "-T", "--troff-device",
)  # fmt: skip
# Readers whose every option and operand only selects what to read: a word nobody has
# seen yet (`xargs grep -l x`, `find -exec cat {} +`) cannot make them do anything else.
ANY_ARGUMENTS = frozenset(
    {"cat", "tac", "nl", "head", "tail", "wc", "grep", "egrep", "fgrep", "ls", "stat", "du"}
    | {"md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "basename", "echo"}
    | {"dirname", "readlink", "realpath", "true", "false", "strings", "od", "hexdump", "diff"}
    | {"cmp", "cut", "tr", "jq", "column", "fold", "rev", "paste", "comm", "join", "expand"}
)

PROGRAMS: dict[str, Check] = {
    **dict.fromkeys(_READERS, plain("read")),
    **dict.fromkeys(_WRITERS, plain("write")),
    **dict.fromkeys(_RUNNERS, plain("run")),
    **dict.fromkeys(_NETWORK, plain("run")),
    **dict.fromkeys(("nc", "ncat", "netcat"), plain("run", "-e", "-c", "--exec", "--sh-exec")),
    "uniq": uniq,
    "ps": ps,
    "mkdir": mkdir,
    "mktemp": plain("add"),
    "time": writes_if("read", "-o", "--output", "-a", "--append"),
    "file": writes_if("read", "-C", "--compile"),
    "ss": plain("read", "-K", "--kill"),
    "ruff": ruff,
    "black": formatter(("--check", "--diff")),
    "isort": formatter(("--check", "--check-only", "--diff", "-c")),
    "rustfmt": formatter(("--check",)),
    "gofmt": formatter((), ("-w",)),
    "clang-format": formatter((), ("-i",)),
    "shfmt": formatter((), ("-w", "--write")),
    "prettier": formatter((), ("--write", "-w")),
    "eslint": formatter((), ("--fix",)),
    "autopep8": formatter((), ("-i", "--in-place")),
    "yapf": formatter((), ("-i", "--in-place")),
    "iconv": writes_if("read", "-o", "--output"),
    "shuf": writes_if("read", "-o", "--output"),
    "tree": writes_if("read", "-o"),
    "man": plain("read", *_MAN_RUNS),
    "info": plain("read", "-o", "--output"),
    "rg": plain("read", "--pre", "--pre-glob", "--hostname-bin", "-z", "--search-zip"),
    "ag": plain("read", "--pager"),
    "ack": plain("read", "--pager"),
    "bat": plain("read", "--pager"),
    "dmesg": plain("read", "-C", "-c", "--clear", "-D", "-E", "-n", "--console-level"),
    "sensors": plain("read", "-s", "--set"),
    "base64": writes_if("read", "-o", "--output"),
    "split": plain("write", "--filter"),
    **dict.fromkeys(("gcc", "g++", "cc", "c++", "clang", "clang++"), compiler),
    # `X run CMD`: CMD is judged on its own (normalize.unwrap); X itself runs the project.
    **dict.fromkeys(("pipenv", "pdm", "hatch", "rye", "conda", "mamba", "pixi", "pipx"), RUNS),
    "stack": plain("run"),
    "cabal": plain("run"),
    "pandoc": plain("run", "--filter", "-F", "--lua-filter", "-L"),
    "pdflatex": no_prefix("run", "-shell-escape", "--shell-escape", "-enable-write18"),
    "xelatex": no_prefix("run", "-shell-escape", "--shell-escape", "-enable-write18"),
    "protoc": no_prefix("run", "--plugin"),
    "django-admin": no_prefix("run", "-c", "--command"),
    "npx": npx,
    "nodemon": no_prefix("run", "--exec", "-x"),
    "elixir": script_language("e", ("--eval",)),
    "mix": no_prefix("run", "-e", "--eval"),
    "erl": no_prefix("run", "-eval"),
    "ghc": no_prefix("run", "-e"),
    "swift": no_prefix("run", "-e"),
    "kotlinc": no_prefix("run", "-e", "-script"),
    "tsx": script_language("ep", ("--eval", "--print")),
    "ts-node": script_language("ep", ("--eval", "--print")),
    "bun": bun,
    "deno": deno,
    "yarn": js_package_manager,
    "pnpm": js_package_manager,
    "rustup": subcommands({**all_of(RUN, "update", "show", "target", "component", "default")}),
    "eval": plain("read"),  # what it runs is judged on its own
    "env": env,
    "fd": plain("read", "-x", "--exec", "-X", "--exec-batch"),
    "fdfind": plain("read", "-x", "--exec", "-X", "--exec-batch"),
    "find": find,
    "sort": sort,
    "less": less,
    "xxd": xxd,
    "yq": yq,
    "date": date,
    "hostname": no_operands,
    "history": history,
    "fc": fc,
    "set": shell_set,
    "export": declare,
    "declare": declare,
    "typeset": declare,
    "local": declare,
    "readonly": declare,
    "unset": unset,
    "hash": plain("read", "-p"),
    "command": shell_command,
    "rm": rm,
    "tar": tar,
    "bsdtar": tar,
    "zip": plain("write", "-TT", "--unzip-command", "-T", "--test"),
    "unzip": unzip,
    "sed": sed,
    "gsed": sed,
    "awk": awk,
    "gawk": awk,
    "mawk": awk,
    "nawk": awk,
    "source": source,
    ".": source,
    "make": make,
    "gmake": make,
    "cmake": plain("run", "-P", "-E"),
    "cargo": cargo,
    "go": _GO,
    "npm": _NPM,
    "pip": _PIP,
    "pip3": _PIP,
    "uv": _UV,
    "poetry": _POETRY,
    "brew": _BREW,
    "apt": _APT,
    "apt-get": _APT,
    "apt-cache": _APT,
    "dnf": _APT,
    "yum": _APT,
    "terraform": _TERRAFORM,
    "tofu": _TERRAFORM,
    "kubectl": _KUBECTL,
    "helm": _HELM,
    "gem": _GEM,
    "bundle": _BUNDLE,
    "systemctl": _SYSTEMCTL,
    "journalctl": journalctl,
    "crontab": crontab,
    "kill": kill,
    "ip": ip,
    "fdisk": partitions,
    "sfdisk": partitions,
    "parted": partitions,
    "blkid": plain("read"),
    "openssl": openssl,
    "curl": curl,
    "wget": plain(
        "write", "-e", "--execute", "--post-file", "--body-file", "--config", "--use-askpass"
    ),
    "ssh": ssh,
    "scp": plain("run", "-o", "-F", "-S"),
    "rsync": plain("write", "-e", "--rsh", "--rsync-path", "--config"),
    "git": git,
    "gh": gh,
    "docker": docker,
    "podman": docker,
    "docker-compose": docker,
    "podman-compose": docker,
    "node": script_language("ep", ("--eval", "--print", "--input-type")),
    "nodejs": script_language("ep", ("--eval", "--print", "--input-type")),
    "perl": script_language("eEx"),
    "ruby": script_language("e"),
    "php": script_language("rRBEF"),
    "lua": script_language("el"),
    "luajit": script_language("el"),
    "Rscript": script_language("e"),
    "tclsh": script_language(""),
    "psql": sql_client(("-c", "--command")),
    "mysql": sql_client(("-e", "--execute")),
    "mariadb": sql_client(("-e", "--execute")),
    "sqlite3": sql_client((), positional=True),
    "duckdb": sql_client(("-c",), positional=True),
    **dict.fromkeys(SHELLS, shell_program),
}

# Programs that run with other privileges or outside the sandbox: never proven harmless.
ESCAPES = frozenset(
    {"sudo", "su", "doas", "pkexec", "run0", "sudoedit", "runuser", "nsenter", "unshare"}
    | {"chroot", "systemd-run", "machinectl", "firejail", "bwrap", "setpriv", "capsh"}
    | {"lxc", "lxc-attach", "lxc-execute", "incus", "ctr", "nerdctl", "crictl", "kubectl-exec"}
    | {"systemd-nspawn", "flatpak-spawn", "setcap", "newgrp", "sg", "chsh", "passwd"}
    | {"visudo", "useradd", "usermod", "adduser", "mount", "umount", "modprobe", "insmod"}
    | {"rmmod", "sysctl", "iptables", "ip6tables", "nft", "ufw", "at", "batch", "trap"}
    | {"alias", "enable", "launchctl", "service", "screen", "tmux", "script", "expect"}
)
