/**
 * The IP address a client address names, normalised for `networkOf`, or null when it names
 * none: a port after an IPv4 address or a bracketed IPv6 address is dropped (proxies write
 * `203.0.113.8:40001` and `[2001:db8::1]:443` into `X-Forwarded-For`), as is an IPv6 zone.
 */
function ipOf(address: string): string | null {
  const raw = address.trim();
  const v4 = raw.match(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?::\d{1,5})?$/);
  if (v4) {
    return v4.slice(1).every((o) => Number(o) <= 255) ? v4.slice(1).map(Number).join(".") : null;
  }
  const bracketed = raw.match(/^\[([^\]]+)\](?::\d{1,5})?$/);
  let a = bracketed ? bracketed[1] : raw;
  const zone = a.indexOf("%");
  if (zone >= 0) a = a.slice(0, zone);
  return a.includes(":") && expandIpv6(a) ? a.toLowerCase() : null;
}

/**
 * Network identity (docs/limits.md): an IPv4 address, or the /64 of an IPv6 address.
 * IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`, `::ffff:102:304`) and the dotted
 * `::1.2.3.4` count as their IPv4 address. An address that names no IP stays as given.
 */
export function networkOf(address: string): string {
  const a = ipOf(address);
  if (a === null) return address.trim();
  if (!a.includes(":")) return a;
  const dotted = a.match(/^(?:0*:)*:?(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) return dotted[1].split(".").map(Number).join(".");
  const groups = expandIpv6(a)!;
  if (groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff") {
    const [hi, lo] = [parseInt(groups[6], 16), parseInt(groups[7], 16)];
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
  }
  return groups.slice(0, 4).join(":") + "::/64";
}

const DIGIT_OR_DOT = /[\d.]/;

/**
 * The four octets of a dotted IPv4 tail (`1.2.3.4` at the end of `::ffff:1.2.3.4`), or null:
 * four groups of one to three digits, each at most 255, starting a group of the address (so
 * the `a` of `::a1.2.3.4` never joins the hex). Found in one pass from the end rather than by
 * a regex that would scan from every digit to the end (quadratic).
 */
function dottedTail(s: string): string[] | null {
  let start = s.length;
  while (start > 0 && DIGIT_OR_DOT.test(s[start - 1])) start--;
  if (start > 0 && s[start - 1] !== ":") return null;
  const groups = s.slice(start).split(".");
  return groups.length === 4 && groups.every((g) => /^\d{1,3}$/.test(g) && Number(g) <= 255)
    ? groups
    : null;
}

function expandIpv6(a: string): string[] | null {
  let s = a.toLowerCase();
  // An embedded IPv4 tail becomes two hextets.
  const v4 = dottedTail(s);
  if (v4) {
    const n = v4.map(Number);
    s = s.slice(0, s.length - v4.join(".").length) + ((n[0] << 8) | n[1]).toString(16) + ":" +
      ((n[2] << 8) | n[3]).toString(16);
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array(Math.max(0, fill)).fill("0"), ...tail];
  if (all.length !== 8 || all.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => g.replace(/^0+(?=.)/, ""));
}

/**
 * The client network of a request: the socket address, or with a trusted proxy the last
 * X-Forwarded-For hop (its port dropped; the socket address when it names no IP).
 */
export function clientNetwork(
  remoteAddress: string | undefined,
  forwardedFor: string | null,
  trustProxy: boolean,
): string {
  if (trustProxy && forwardedFor) {
    const hops = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean);
    const last = hops[hops.length - 1];
    // A hop that names no IP (`unknown`, an obfuscated name) counts as the proxy's own address.
    if (last && ipOf(last) !== null) return networkOf(last);
  }
  return networkOf(remoteAddress ?? "127.0.0.1");
}

/**
 * The network allowance a request spends (docs/limits.md "Cross-site requests"): the
 * client network, or, for a request a browser sent from another site's page (an `Origin`
 * other than the board's own), that network's separate cross-origin allowance. A page on
 * another site can make its visitor's browser call the CORS-open endpoints (`/mcp`, the
 * OAuth token, registration and revocation endpoints), but it then spends only that
 * allowance, never what the visitor's own agents on the same network use. A non-browser
 * client that forges `Origin` gains one more allowance of each kind, never more than one.
 */
export function allowanceNetwork(
  network: string,
  origin: string | undefined,
  boardOrigin: string,
): string {
  return origin === undefined || origin === boardOrigin ? network : `${network} cross-origin`;
}
