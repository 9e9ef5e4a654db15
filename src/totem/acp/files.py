"""The editor's file system for the file tools (`tools/files.py`): reads come from its
buffers, unsaved changes included (`fs/read_text_file`), and writes go to it
(`fs/write_text_file`), when the client offers them in its capabilities. A binary file, or
one the editor cannot give, is read from disk; a file the editor fails to write is a tool
error the model is told about.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from acp import RequestError
from acp.interfaces import Client

from totem.tools.base import ToolError
from totem.tools.files import DiskFiles, as_stream
from totem.tools.read import is_binary

__all__ = ["ClientFiles"]


class ClientFiles:
    def __init__(self, client: Client, session_id: str, *, read: bool, write: bool) -> None:
        self.client = client
        self.session_id = session_id
        self.reads = read
        self.writes = write
        self.disk = DiskFiles()

    async def read_bytes(self, path: Path) -> bytes:
        if not self.reads or _binary_on_disk(path):
            return await self.disk.read_bytes(path)
        try:
            answer = await self.client.read_text_file(path=str(path), session_id=self.session_id)
        except RequestError:
            if path.is_file():
                return await self.disk.read_bytes(path)
            raise FileNotFoundError(str(path)) from None
        return answer.content.encode("utf-8")

    async def open_read(self, path: Path) -> BinaryIO:
        if not self.reads or _binary_on_disk(path):
            return await self.disk.open_read(path)
        return as_stream(await self.read_bytes(path))

    async def write_bytes(self, path: Path, data: bytes) -> None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if not self.writes or text is None:
            return await self.disk.write_bytes(path, data)
        try:
            await self.client.write_text_file(content=text, path=str(path),
                                              session_id=self.session_id)
        except RequestError as exc:
            raise ToolError(f"The editor could not write {path}: {exc}") from None


def _binary_on_disk(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return is_binary(file.read(8192))
    except OSError:
        return False
