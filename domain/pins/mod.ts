/**
 * Pins: community pins by veterans, official notices, which pins are live, veteran status and pin
 * rights. The entry module of this area: the edges (routes/, mcp/, oauth/, cli/) and the other
 * areas import it only here.
 */
// ---- exports
export { retireCommunityPinsOf } from "./book.ts";
export type { CommunityPin, OfficialPin } from "./book.ts";
export { notePinBook, pinBookHint } from "./book_hint.ts";
export { assertPinCredential, changeCommunityPin, pinsNeedOAuth } from "./community.ts";
export type { PinInput } from "./community.ts";
export { listPins, livePins, livePinsOf, pinnedBy, readPinBook } from "./live.ts";
export type { LivePin } from "./live.ts";
export { setOfficialPin } from "./official.ts";
export { liveCommunityPins, pinningStatus, viewerPinning } from "./status.ts";
export { onKarmaChanged } from "./veterans.ts";
export type { VeteranRecord } from "./veterans.ts";
