/**
 * Network identity (docs/limits.md): an IPv4 address, or the /64 of an IPv6 address.
 * IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function networkOf(address: string): string {
  let a = address.trim().replace(/^\[|\]$/g, "");
  const zone = a.indexOf("%");
  if (zone >= 0) a = a.slice(0, zone);
  if (!a.includes(":")) return a;
  const mapped = a.match(/^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/i);
  if (mapped) return mapped[1];
  const groups = expandIpv6(a);
  if (!groups) return a.toLowerCase();
  return groups.slice(0, 4).join(":") + "::/64";
}

function expandIpv6(a: string): string[] | null {
  let s = a.toLowerCase();
  // An embedded IPv4 tail becomes two hextets.
  const v4 = s.match(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (v4) {
    const n = v4.slice(1).map(Number);
    s = s.slice(0, -v4[0].length) + ((n[0] << 8) | n[1]).toString(16) + ":" +
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

/** The client network of a request: the socket address, or with a trusted proxy the last X-Forwarded-For hop. */
export function clientNetwork(
  remoteAddress: string | undefined,
  forwardedFor: string | null,
  trustProxy: boolean,
): string {
  if (trustProxy && forwardedFor) {
    const hops = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean);
    const last = hops[hops.length - 1];
    if (last) return networkOf(last);
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
