/**
 * Rewrites a WebAssembly binary so that float-to-integer conversions saturate instead of trapping.
 *
 * C leaves converting an out-of-range float (or NaN, or the -infinity of log(0)) to an integer
 * undefined; on x86 it yields INT_MIN and pocketsphinx carries on with a hopeless score. The
 * trapping WASM opcodes (`i32.trunc_f64_s` and kin) turn the same line into a RuntimeError that
 * leaves the recognizer's state undefined. The non-trapping `*.trunc_sat_*` opcodes (emscripten's
 * `-mnontrapping-fptoint`) clamp instead: NaN becomes 0, everything else the nearest integer in
 * range. Only those 8 opcodes change; the rest of the code section is copied as it is.
 *
 * Handles the MVP instruction set plus the 0xFC prefix (saturating conversions, bulk memory); any
 * other opcode is refused rather than guessed at. Must stay self-contained (it is also evaluated
 * inside the engine process, see EngineProcess `helpers`): it may use only its parameter.
 */
export function withSaturatingFloatToInt(wasm: Uint8Array): Uint8Array {
  // Trapping opcode -> the 0xFC sub-opcode of its saturating twin.
  const saturating = new Map<number, number>([
    [0xa8, 0], // i32.trunc_f32_s
    [0xa9, 1], // i32.trunc_f32_u
    [0xaa, 2], // i32.trunc_f64_s
    [0xab, 3], // i32.trunc_f64_u
    [0xae, 4], // i64.trunc_f32_s
    [0xaf, 5], // i64.trunc_f32_u
    [0xb0, 6], // i64.trunc_f64_s
    [0xb1, 7], // i64.trunc_f64_u
  ]);
  const codeSectionId = 10;

  const readUnsigned = (bytes: Uint8Array, at: number): [value: number, next: number] => {
    let value = 0;
    let shift = 0;
    let position = at;
    let byte: number;
    do {
      byte = bytes[position] ?? 0;
      position += 1;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return [value, position];
  };
  const skipLeb = (bytes: Uint8Array, at: number): number => {
    let position = at;
    while ((bytes[position] ?? 0) & 0x80) position += 1;
    return position + 1;
  };
  const encodeUnsigned = (value: number): number[] => {
    const encoded: number[] = [];
    let rest = value;
    do {
      let byte = rest % 128;
      rest = Math.floor(rest / 128);
      if (rest > 0) byte |= 0x80;
      encoded.push(byte);
    } while (rest > 0);
    return encoded;
  };

  /** Where the immediates of the instruction whose opcode ends at `at` end. */
  const skipImmediates = (body: Uint8Array, opcode: number, at: number): number => {
    if (opcode <= 0x01 || opcode === 0x05 || opcode === 0x0b || opcode === 0x0f) return at;
    if (opcode === 0x1a || opcode === 0x1b || (opcode >= 0x45 && opcode <= 0xc4)) return at;
    if (opcode >= 0x02 && opcode <= 0x04) return skipLeb(body, at); // block type
    if (opcode === 0x0c || opcode === 0x0d || opcode === 0x10) return skipLeb(body, at);
    if (opcode >= 0x20 && opcode <= 0x24) return skipLeb(body, at); // locals, globals
    if (opcode === 0x41 || opcode === 0x42) return skipLeb(body, at); // i32/i64.const
    if (opcode === 0x43) return at + 4;
    if (opcode === 0x44) return at + 8;
    if (opcode === 0x3f || opcode === 0x40) return skipLeb(body, at); // memory.size/grow
    if (opcode >= 0x28 && opcode <= 0x3e) return skipLeb(body, skipLeb(body, at)); // memarg
    if (opcode === 0x11) return skipLeb(body, skipLeb(body, at)); // call_indirect
    if (opcode === 0x0e) {
      const [targetCount, next] = readUnsigned(body, at);
      let position = next;
      for (let index = 0; index <= targetCount; index += 1) position = skipLeb(body, position);
      return position;
    }
    if (opcode === 0xfc) {
      const [subOpcode, next] = readUnsigned(body, at);
      if (subOpcode <= 7) return next;
      if (subOpcode === 8) return skipLeb(body, next) + 1; // memory.init
      if (subOpcode === 9) return skipLeb(body, next); // data.drop
      if (subOpcode === 10) return next + 2; // memory.copy
      if (subOpcode === 11) return next + 1; // memory.fill
      throw new Error(`unsupported WASM instruction 0xfc ${subOpcode}`);
    }
    throw new Error(`unsupported WASM opcode 0x${opcode.toString(16)}`);
  };

  const rewriteBody = (body: Uint8Array): number[] => {
    const [localGroupCount, afterCount] = readUnsigned(body, 0);
    let position = afterCount;
    for (let group = 0; group < localGroupCount; group += 1) position = skipLeb(body, position) + 1;
    const rewritten = Array.from(body.subarray(0, position));
    while (position < body.length) {
      const start = position;
      const opcode = body[position] ?? 0;
      const subOpcode = saturating.get(opcode);
      if (subOpcode !== undefined) {
        rewritten.push(0xfc, subOpcode);
        position += 1;
        continue;
      }
      position = skipImmediates(body, opcode, position + 1);
      for (let index = start; index < position; index += 1) rewritten.push(body[index] ?? 0);
    }
    return rewritten;
  };

  const output: number[] = Array.from(wasm.subarray(0, 8)); // magic and version
  let position = 8;
  while (position < wasm.length) {
    const sectionId = wasm[position] ?? 0;
    const [sectionSize, contentStart] = readUnsigned(wasm, position + 1);
    const sectionEnd = contentStart + sectionSize;
    if (sectionId !== codeSectionId) {
      for (let index = position; index < sectionEnd; index += 1) output.push(wasm[index] ?? 0);
      position = sectionEnd;
      continue;
    }
    const [functionCount, firstBody] = readUnsigned(wasm, contentStart);
    const content = encodeUnsigned(functionCount);
    let bodyPosition = firstBody;
    for (let index = 0; index < functionCount; index += 1) {
      const [bodySize, bodyStart] = readUnsigned(wasm, bodyPosition);
      const body = rewriteBody(wasm.subarray(bodyStart, bodyStart + bodySize));
      content.push(...encodeUnsigned(body.length));
      for (const byte of body) content.push(byte);
      bodyPosition = bodyStart + bodySize;
    }
    output.push(codeSectionId, ...encodeUnsigned(content.length));
    for (const byte of content) output.push(byte);
    position = sectionEnd;
  }
  return Uint8Array.from(output);
}
