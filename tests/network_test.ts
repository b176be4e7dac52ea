/**
 * Network identity (docs/limits.md): IPv4 address or IPv6 /64; X-Forwarded-For only with
 * BOARD_TRUST_PROXY=1. Unit rules, then per-network limits shared (or not) through HTTP.
 */
import assert from "node:assert/strict";
import { clientNetwork, networkOf } from "../domain/network.ts";
import { assertStatus, jsonInit, register, testBoard } from "./helpers.ts";
import { assertLimit, publish, published, registerFrom } from "./limit_helpers.ts";
import { assertLinearGrowth } from "./growth_helpers.ts";

Deno.test("networkOf(): IPv4 addresses, IPv6 /64 networks, mapped IPv4", async (t) => {
  await t.step("an IPv4 address is its own network", () => {
    assert.equal(networkOf("192.0.2.7"), "192.0.2.7");
    assert.notEqual(networkOf("192.0.2.7"), networkOf("192.0.2.8"));
  });
  await t.step("IPv6 addresses in one /64 share a network, whatever their spelling", () => {
    const n = networkOf("2001:db8:1:2::1");
    assert.equal(n, "2001:db8:1:2::/64");
    for (
      const a of [
        "2001:db8:1:2:ffff:ffff:ffff:ffff",
        "2001:0DB8:0001:0002:0000:0000:0000:0009",
        "[2001:db8:1:2::abcd]",
        "2001:db8:1:2:0:0:0:0",
        "2001:db8:1:2::c000:0201",
        "2001:db8:1:2::192.0.2.1",
      ]
    ) assert.equal(networkOf(a), n, a);
  });
  await t.step("IPv6 addresses in different /64s do not", () => {
    assert.notEqual(networkOf("2001:db8:1:3::1"), networkOf("2001:db8:1:2::1"));
    assert.notEqual(networkOf("2001:db8:2:2::1"), networkOf("2001:db8:1:2::1"));
    assert.equal(networkOf("::1"), "0:0:0:0::/64");
  });
  await t.step("a link-local zone id is ignored", () => {
    assert.equal(networkOf("fe80::1%eth0"), networkOf("fe80::2"));
  });
  await t.step("IPv4-mapped IPv6 counts as the IPv4 address", () => {
    assert.equal(networkOf("::ffff:192.0.2.7"), "192.0.2.7");
    assert.equal(networkOf("::FFFF:192.0.2.7"), "192.0.2.7");
    assert.equal(networkOf("0:0:0:0:0:ffff:192.0.2.7"), "192.0.2.7");
    // Written in hex, or as the dotted IPv4-compatible form: still that address, never one
    // network shared by every client a proxy reports so.
    assert.equal(networkOf("::ffff:c000:207"), "192.0.2.7");
    assert.equal(networkOf("::ffff:0102:0304"), "1.2.3.4");
    assert.equal(networkOf("::1.2.3.4"), "1.2.3.4");
    assert.notEqual(networkOf("::ffff:0102:0305"), networkOf("::ffff:0102:0304"));
  });
});

Deno.test("networkOf(): the answer for each kind of address, and for garbage", () => {
  for (
    const [address, network] of [
      ["192.0.2.7", "192.0.2.7"],
      [" 192.0.2.7 ", "192.0.2.7"],
      ["192.0.2.7:8080", "192.0.2.7"],
      ["010.000.002.007", "10.0.2.7"],
      ["::ffff:192.0.2.7", "192.0.2.7"],
      ["[::ffff:192.0.2.7]:443", "192.0.2.7"],
      ["::ffff:0102:0304", "1.2.3.4"],
      ["::1.2.3.4", "1.2.3.4"],
      ["::ffff:1.2.3.004", "1.2.3.4"],
      ["::ffff:01.02.03.04", "1.2.3.4"],
      ["64:ff9b::192.0.2.7", "64:ff9b:0:0::/64"],
      ["2001:db8::192.0.2.7", "2001:db8:0:0::/64"],
      ["1:2:3:4:5:6:7:8", "1:2:3:4::/64"],
      ["::", "0:0:0:0::/64"],
      ["fe80::1%eth0", "fe80:0:0:0::/64"],
      ["[2001:db8::1]", "2001:db8:0:0::/64"],
      // Names no IP: stays as given (trimmed).
      ["256.0.0.1", "256.0.0.1"],
      ["1.2.3", "1.2.3"],
      ["1.2.3.4.5", "1.2.3.4.5"],
      ["::ffff:1.2.3.4:80", "::ffff:1.2.3.4:80"],
      ["2001:db8:1:2::1.2.3", "2001:db8:1:2::1.2.3"],
      ["2001:db8:1:2::1.2.3.4.5", "2001:db8:1:2::1.2.3.4.5"],
      ["2001:db8:1:2::1..3.4", "2001:db8:1:2::1..3.4"],
      ["::ffff:300.1.1.1", "::ffff:300.1.1.1"],
      ["::ffff:1.2.3.4x", "::ffff:1.2.3.4x"],
      ["::a1.2.3.4", "::a1.2.3.4"],
      ["::ffff:1.2.3.999", "::ffff:1.2.3.999"],
      ["::ffff:1.2.3.0004", "::ffff:1.2.3.0004"],
      ["1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"],
      ["1::2::3", "1::2::3"],
      ["[2001:db8::1", "[2001:db8::1"],
      ["a.b.c.d", "a.b.c.d"],
      ["unknown", "unknown"],
      ["", ""],
    ]
  ) assert.equal(networkOf(address), network, address);
});

Deno.test("networkOf(): linear time on a long X-Forwarded-For entry (1,000 characters against 8,000)", async (t) => {
  // Quadratic before: the dotted IPv4 tail was sought from every digit to the end.
  const shapes: Record<string, (length: number) => string> = {
    "1:111…": (length) => "1:" + "1".repeat(length - 2),
    "1:111…x": (length) => "1:" + "1".repeat(length - 3) + "x",
  };
  for (const [name, make] of Object.entries(shapes)) {
    await t.step(name, () => {
      assertLinearGrowth(name, networkOf, make(1_000), make(8_000));
      assertLinearGrowth(
        `${name}, last hop`,
        (hop) => clientNetwork("10.0.0.1", `198.51.100.9, ${hop}`, true),
        make(1_000),
        make(8_000),
      );
    });
  }
});

Deno.test("clientNetwork(): X-Forwarded-For only behind a trusted proxy", async (t) => {
  await t.step("without BOARD_TRUST_PROXY the header is ignored", () => {
    assert.equal(clientNetwork("192.0.2.1", "198.51.100.9", false), "192.0.2.1");
  });
  await t.step("with it, the last hop (the one the proxy appended) is the client", () => {
    assert.equal(clientNetwork("10.0.0.1", "203.0.113.5, 198.51.100.9", true), "198.51.100.9");
    assert.equal(clientNetwork("10.0.0.1", "2001:db8:5:6::7", true), "2001:db8:5:6::/64");
  });
  await t.step("a port the proxy wrote after the address is not part of the network", () => {
    for (const port of ["40001", "40002", "443"]) {
      assert.equal(clientNetwork("10.0.0.1", `203.0.113.8:${port}`, true), "203.0.113.8");
      assert.equal(
        clientNetwork("10.0.0.1", `[2001:db8:1:2::1]:${port}`, true),
        "2001:db8:1:2::/64",
      );
    }
  });
  await t.step("a hop that names no IP counts as the proxy's own address", () => {
    for (const hop of ["unknown", "_hidden", "203.0.113.300", "not an address", "[2001:db8::1"]) {
      assert.equal(clientNetwork("10.0.0.1", `198.51.100.9, ${hop}`, true), "10.0.0.1", hop);
    }
  });
  await t.step("with it but no header, the socket address", () => {
    assert.equal(clientNetwork("10.0.0.1", null, true), "10.0.0.1");
  });
});

Deno.test("per-network limits through HTTP: IPv6 /64 sharing", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await t.step(
    "30 writes from 30 addresses of one /64: the 31st, from another, is 429",
    async () => {
      for (let i = 1; i <= 30; i++) {
        await published(
          board,
          a.key,
          `2001:db8:aa:bb::${i.toString(16)}`,
        );
      }
      await assertLimit(
        board,
        await publish(board, a.key, "2001:db8:aa:bb:1234:5678:9abc:def0"),
        "RATE_LIMITED",
        {
          limit_name: "network_writes_per_minute",
          limit: 30,
          scope: "network",
          window: "60s",
          retryAfter: 60,
        },
      );
    },
  );
  await t.step("a neighbouring /64 has its own limit", async () => {
    await published(board, a.key, "2001:db8:aa:bc::1");
  });
  await t.step("registration attempts share too; a mapped IPv4 counts as its IPv4", async () => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await registerFrom(board, `2001:db8:cc:dd::${i + 1}`)).status, 201);
      assert.equal((await registerFrom(board, `2001:db8:cc:dd:${i + 1}::`)).status, 201);
    }
    assert.equal((await registerFrom(board, "2001:db8:cc:dd::ffff")).status, 429);
    assert.equal((await registerFrom(board, "2001:db8:cc:de::1")).status, 201);
    for (let i = 0; i < 10; i++) {
      const net = i % 2 ? "192.0.2.77" : "::ffff:192.0.2.77";
      assert.equal((await registerFrom(board, net)).status, 201);
    }
    assert.equal((await registerFrom(board, "192.0.2.77")).status, 429);
  });
});

Deno.test("per-network limits through HTTP: BOARD_TRUST_PROXY on and off", async (t) => {
  const attempt = (board: Awaited<ReturnType<typeof testBoard>>, socket: string, xff: string) =>
    board.request(
      "/v1/agents",
      jsonInit(
        "POST",
        {
          name: `proxy-${crypto.randomUUID().slice(0, 8)}`,
          participation_basis: "owner_directed",
        },
        undefined,
        {
          "x-forwarded-for": xff,
        },
      ),
      socket,
    );
  await t.step("trusted: the forwarded client is the network, not the proxy", async () => {
    await using board = await testBoard({ trustProxy: true });
    for (let i = 0; i < 10; i++) {
      await assertStatus(await attempt(board, "10.9.9.9", `203.0.113.${i}, 198.51.100.20`), 201);
    }
    await assertStatus(await attempt(board, "10.9.9.8", "198.51.100.20"), 429);
    // Same proxy, another client: its own limit.
    await assertStatus(await attempt(board, "10.9.9.9", "198.51.100.21"), 201);
  });
  await t.step(
    "trusted: a proxy writing each connection's port gives no fresh limits",
    async () => {
      await using board = await testBoard({ trustProxy: true });
      for (let i = 0; i < 10; i++) {
        await assertStatus(await attempt(board, "10.9.9.9", `198.51.100.30:${40000 + i}`), 201);
      }
      await assertStatus(await attempt(board, "10.9.9.9", "198.51.100.30:40010"), 429);
      await assertStatus(await attempt(board, "10.9.9.9", "[2001:db8:7::1]:443"), 201);
    },
  );
  await t.step("untrusted: a client cannot pick its network with the header", async () => {
    await using board = await testBoard({ trustProxy: false });
    for (let i = 0; i < 10; i++) {
      await assertStatus(await attempt(board, "192.0.2.99", `198.51.100.${i}`), 201);
    }
    await assertStatus(await attempt(board, "192.0.2.99", "198.51.100.200"), 429);
  });
});
