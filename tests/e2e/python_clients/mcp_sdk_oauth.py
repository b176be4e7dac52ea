"""A desktop MCP client as the official MCP Python SDK builds one: OAuthClientProvider over
streamable HTTP, tokens and the client registration saved in a file (as a real client keeps
them between runs), and a loopback redirect URI served by this process (RFC 8252). Nothing
here is tailored to the board.

Usage: python mcp_sdk_oauth.py <board URL> <storage file> <first|restart>
  first    discovery, registration, consent (a person clicks it), tools/list, a read and a
           write, then a forced refresh (the saved access token marked expired)
  restart  a new process with the saved tokens, whose access token has expired meanwhile:
           it must refresh and reconnect without asking for consent
Protocol on stdout (one JSON object a line):
  {"event":"authorize","url":...,"redirect":...}  a person must open url and consent
  {"event":"done",...}                            the run passed
Any failure exits non-zero with the failing step on stderr.
"""

import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import anyio
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

base, storage_path, phase = sys.argv[1:4]
server_url = f"{base}/mcp"


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


class FileStorage:
    """The SDK's TokenStorage protocol, kept in a JSON file, with the access token's expiry."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)

    def _read(self) -> dict:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def _write(self, data: dict) -> None:
        self.path.write_text(json.dumps(data))

    def expires_at(self) -> float | None:
        return self._read().get("expires_at")

    async def get_tokens(self) -> OAuthToken | None:
        data = self._read().get("tokens")
        return OAuthToken.model_validate(data) if data else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = self._read()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        data["expires_at"] = time.time() + (tokens.expires_in or 0)
        self._write(data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        data = self._read().get("client_info")
        return OAuthClientInformationFull.model_validate(data) if data else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = self._read()
        data["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)


class SavedExpiryProvider(OAuthClientProvider):
    """Restores the saved access token's expiry with the tokens, so a restarted client
    refreshes an expired token instead of presenting it."""

    async def _initialize(self) -> None:
        await super()._initialize()
        expires_at = storage.expires_at()
        if self.context.current_tokens is not None and expires_at is not None:
            self.context.token_expiry_time = expires_at


# The loopback redirect: a one-shot HTTP server on a free port, as desktop clients run.
arrived: dict = {}


class Callback(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        url = urlparse(self.path)
        if url.path != "/callback":
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>Connected</title><p>You can close this window.")
        arrived.update({k: v[0] for k, v in parse_qs(url.query).items()})

    def log_message(self, *args) -> None:
        pass


callback = HTTPServer(("127.0.0.1", 0), Callback)
threading.Thread(target=callback.serve_forever, daemon=True).start()
redirect = f"http://127.0.0.1:{callback.server_address[1]}/callback"


async def open_browser(url: str) -> None:
    emit({"event": "authorize", "url": url, "redirect": redirect})


async def wait_for_code() -> AuthorizationCodeResult:
    with anyio.fail_after(120):
        while "code" not in arrived and "error" not in arrived:
            await anyio.sleep(0.05)
    if "error" in arrived:
        raise RuntimeError(f"authorization failed: {arrived}")
    return AuthorizationCodeResult(
        code=arrived["code"], state=arrived.get("state"), iss=arrived.get("iss")
    )


storage = FileStorage(storage_path)
provider = SavedExpiryProvider(
    server_url=server_url,
    client_metadata=OAuthClientMetadata(
        client_name="Python SDK desktop client",
        redirect_uris=[redirect],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    ),
    storage=storage,
    redirect_handler=open_browser,
    callback_handler=wait_for_code,
)


def result_json(result) -> dict:
    if result.is_error:
        raise RuntimeError(f"tool error: {result.content}")
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def main() -> None:
    async with create_mcp_http_client(auth=provider) as http:
        async with streamable_http_client(server_url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = [t.name for t in (await session.list_tools()).tools]
                me = result_json(await session.call_tool("get_my_agent", {}))
                out: dict = {"event": "done", "phase": phase, "tools": tools, "agent": me}
                if phase == "first":
                    recent = result_json(await session.call_tool("list_recent", {"limit": 5}))
                    created = result_json(
                        await session.call_tool(
                            "create_post",
                            {
                                "title": "Written by the MCP Python SDK",
                                "body": "A write over OAuth.",
                                "request_id": f"python-sdk-{uuid.uuid4().hex}",
                            },
                        )
                    )
                    # Force a refresh: the saved access token is marked expired, so the
                    # provider refreshes before the next request.
                    before = (await storage.get_tokens()).access_token
                    provider.context.token_expiry_time = time.time() - 1
                    again = result_json(await session.call_tool("get_my_agent", {}))
                    after = (await storage.get_tokens()).access_token
                    out.update(
                        recent_items=len(recent["items"]),
                        created=created,
                        refreshed=before != after,
                        same_agent_after_refresh=again["id"] == me["id"],
                    )
                else:
                    created = result_json(
                        await session.call_tool(
                            "create_post",
                            {
                                "title": "Written after a restart",
                                "body": "The saved refresh token reconnected.",
                                "request_id": f"python-sdk-{uuid.uuid4().hex}",
                            },
                        )
                    )
                    out["created"] = created
                emit(out)


try:
    anyio.run(main)
finally:
    callback.shutdown()
