/**
 * Sample-rate conversion of 16-bit mono PCM by a polyphase windowed-sinc filter.
 *
 * The ratio is reduced to integers (8000 → 16000 is up 2 / down 1; 22050 → 8000 is up 160 / down
 * 441) and the filter is tabulated once per phase, so converting costs `2 * zeroCrossings / cutoff`
 * multiply-adds per output sample. The low-pass cutoff sits just under the lower of the two Nyquist
 * frequencies, which removes aliasing when decimating and imaging when interpolating.
 *
 * We use our own instead of libsamplerate-js because that one loads asynchronously, holds WASM
 * memory that must be freed by hand, and its streaming call returns nothing for some chunks.
 */

export interface StreamingResampler {
  readonly inputSampleRateHz: number;
  readonly outputSampleRateHz: number;
  /** Converts the next piece of a stream; output lags input by the filter's half-length. */
  push(samples: Int16Array): Int16Array;
  /** Pads with silence to push out the samples still inside the filter. */
  flush(): Int16Array;
}

export interface ResamplerOptions {
  inputSampleRateHz: number;
  outputSampleRateHz: number;
  /** Sinc zero crossings on each side; more is sharper and slower. Default 16. */
  zeroCrossings?: number;
  /**
   * `windowed-sinc` (default) is a proper low-pass resampler. `linear` interpolates between
   * neighbouring samples: when upsampling it leaves attenuated mirror images of the signal above
   * the old Nyquist frequency, which is what the 16 kHz speech recognizer needs (see
   * pocketsphinxSpeechToText.ts); never use it to downsample.
   */
  kernel?: 'windowed-sinc' | 'linear';
}

function greatestCommonDivisor(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) {
    const remainder = x % y;
    x = y;
    y = remainder;
  }
  return x;
}

function sinc(x: number): number {
  if (x === 0) return 1;
  const angle = Math.PI * x;
  return Math.sin(angle) / angle;
}

/** Blackman window over [-1, 1]. */
function blackman(position: number): number {
  if (position <= -1 || position >= 1) return 0;
  const phase = Math.PI * (position + 1);
  return 0.42 - 0.5 * Math.cos(phase) + 0.08 * Math.cos(2 * phase);
}

function clampToInt16(value: number): number {
  const rounded = Math.round(value);
  if (rounded > 32767) return 32767;
  if (rounded < -32768) return -32768;
  return rounded;
}

export function createResampler(options: ResamplerOptions): StreamingResampler {
  const { inputSampleRateHz, outputSampleRateHz } = options;
  if (!Number.isInteger(inputSampleRateHz) || !Number.isInteger(outputSampleRateHz)) {
    throw new RangeError('sample rates must be whole numbers of hertz');
  }
  if (inputSampleRateHz <= 0 || outputSampleRateHz <= 0)
    throw new RangeError('sample rates must be positive');
  const divisor = greatestCommonDivisor(inputSampleRateHz, outputSampleRateHz);
  const upFactor = outputSampleRateHz / divisor;
  const downFactor = inputSampleRateHz / divisor;
  const isLinear = options.kernel === 'linear';
  const zeroCrossings = options.zeroCrossings ?? 16;
  // Cutoff relative to the input's Nyquist frequency, a little under the lower Nyquist.
  const cutoff = Math.min(1, outputSampleRateHz / inputSampleRateHz) * 0.95;
  const halfLengthInputSamples = isLinear ? 1 : Math.ceil(zeroCrossings / cutoff);
  const tapCount = 2 * halfLengthInputSamples;

  // taps[phase * tapCount + j] weighs input sample (base - halfLength + 1 + j) for an output
  // instant that lies phase/upFactor of an input sample after `base`.
  const taps = new Float64Array(upFactor * tapCount);
  for (let phase = 0; phase < upFactor; phase += 1) {
    const fraction = phase / upFactor;
    for (let j = 0; j < tapCount; j += 1) {
      const distance = j - halfLengthInputSamples + 1 - fraction;
      taps[phase * tapCount + j] = isLinear
        ? Math.max(0, 1 - Math.abs(distance))
        : cutoff * sinc(cutoff * distance) * blackman(distance / (halfLengthInputSamples + 1));
    }
  }

  if (upFactor === 1 && downFactor === 1) {
    return {
      inputSampleRateHz,
      outputSampleRateHz,
      push: (samples) => samples.slice(),
      flush: () => new Int16Array(0),
    };
  }

  // history holds the input samples the next output still needs. It starts with halfLength - 1
  // samples of silence, so that output sample 0 is centred on input sample 0.
  let history = new Float64Array(halfLengthInputSamples - 1);
  /** Position of the next output instant, in units of 1/upFactor input samples, from history[0]. */
  let nextOutputPosition = (halfLengthInputSamples - 1) * upFactor;

  function convert(samples: Int16Array): Int16Array {
    const buffer = new Float64Array(history.length + samples.length);
    buffer.set(history, 0);
    for (let i = 0; i < samples.length; i += 1) buffer[history.length + i] = samples[i] ?? 0;
    const output: number[] = [];
    // The newest input sample a tap can reach is base + halfLength.
    while (Math.floor(nextOutputPosition / upFactor) + halfLengthInputSamples < buffer.length) {
      const base = Math.floor(nextOutputPosition / upFactor);
      const phase = nextOutputPosition - base * upFactor;
      const first = base - halfLengthInputSamples + 1;
      const tapOffset = phase * tapCount;
      let sum = 0;
      for (let j = 0; j < tapCount; j += 1) {
        sum += (buffer[first + j] ?? 0) * (taps[tapOffset + j] ?? 0);
      }
      output.push(clampToInt16(sum));
      nextOutputPosition += downFactor;
    }
    const consumedInputSamples = Math.max(
      0,
      Math.min(buffer.length, Math.floor(nextOutputPosition / upFactor) - halfLengthInputSamples + 1),
    );
    history = buffer.slice(consumedInputSamples);
    nextOutputPosition -= consumedInputSamples * upFactor;
    return Int16Array.from(output);
  }

  let inputSamplesSeen = 0;
  let outputSamplesProduced = 0;
  return {
    inputSampleRateHz,
    outputSampleRateHz,
    push(samples) {
      inputSamplesSeen += samples.length;
      const converted = convert(samples);
      outputSamplesProduced += converted.length;
      return converted;
    },
    flush() {
      const expectedOutputSamples = Math.round((inputSamplesSeen * upFactor) / downFactor);
      const tail = convert(new Int16Array(halfLengthInputSamples + 1));
      const missing = Math.max(0, expectedOutputSamples - outputSamplesProduced);
      outputSamplesProduced += Math.min(missing, tail.length);
      return tail.subarray(0, Math.min(missing, tail.length));
    },
  };
}

/** Converts a whole buffer; the output has exactly round(length * out / in) samples. */
export function resample(
  samples: Int16Array,
  inputSampleRateHz: number,
  outputSampleRateHz: number,
  kernel: ResamplerOptions['kernel'] = 'windowed-sinc',
): Int16Array {
  if (inputSampleRateHz === outputSampleRateHz) return samples.slice();
  const resampler = createResampler({ inputSampleRateHz, outputSampleRateHz, kernel });
  const head = resampler.push(samples);
  const tail = resampler.flush();
  const output = new Int16Array(head.length + tail.length);
  output.set(head, 0);
  output.set(tail, head.length);
  return output;
}
