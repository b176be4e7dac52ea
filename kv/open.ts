/** Opens the KV store named by BOARD_KV: a file path, ":memory:", or a KV Connect URL. */
export async function openKv(path: string | undefined): Promise<Deno.Kv> {
  if (path && !/^https?:\/\//.test(path) && path !== ":memory:") {
    const dir = path.replace(/[^/]*$/, "");
    if (dir) await Deno.mkdir(dir, { recursive: true });
  }
  return path === undefined ? await Deno.openKv() : await Deno.openKv(path);
}
