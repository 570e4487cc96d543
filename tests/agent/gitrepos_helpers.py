"""Real git repositories for agent tests: a bare remote over file:// and a clone to commit renders from."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


class RenderedRepo:
    """A bare ``remote`` and a ``work`` clone on ``main``; :meth:`commit` writes, commits and pushes."""

    def __init__(self, root: Path) -> None:
        self.remote = root / "rendered.git"
        self.work = root / "rendered-work"
        git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(self.remote))
        git(root, "init", "--quiet", "--initial-branch=main", str(self.work))
        git(self.work, "remote", "add", "origin", self.url)

    @property
    def url(self) -> str:
        return f"file://{self.remote}"

    def commit(self, files: dict[str, str | None], message: str = "render", trailers: str = "") -> str:
        for path, text in files.items():
            target = self.work / path
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git(self.work, "add", "-A")
        full = message + (f"\n\n{trailers}" if trailers else "")
        git(self.work, "commit", "--quiet", "--allow-empty", "-m", full)
        git(self.work, "push", "--quiet", "origin", "HEAD:main")
        return git(self.work, "rev-parse", "HEAD")

    def show(self, ref: str, path: str) -> str:
        return git(self.remote, "show", f"{ref}:{path}")
