/**
 * Pins: community pins by veterans, official notices, which pins are live, veteran status and pin
 * rights. The entry module of this area: routes/, mcp/, oauth/ and cli/ import the area only
 * here.
 */
// ---- exports
export { assertPinCredential, changeCommunityPin } from "./community.ts";
export { listPins } from "./live.ts";
export { setOfficialPin } from "./official.ts";
