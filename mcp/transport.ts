/**
 * What `{base}/mcp` runs once a request has arrived (mcp/handler.ts loads this module, and the
 * MCP SDK's server with it, on the first request to /mcp).
 */
export { SUPPORTED_PROTOCOL_VERSIONS } from "./sdk.ts";
export { handleMcpRequest } from "./request_handler.ts";
export { mcpBody, parsedMcpBody } from "./batches.ts";
export { jsonRpcError } from "./messages.ts";
