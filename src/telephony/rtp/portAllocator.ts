import { MediaError } from './mediaError.js';

export interface PortAllocatorOptions {
  /** Lowest port handed out (rounded up to even). Default 10000. */
  minPort?: number;
  /** Highest port (inclusive; the last even port ≤ it is used). Default 20000. */
  maxPort?: number;
}

/**
 * Hands out even UDP ports for RTP (the odd port above each is left for RTCP) from a configured
 * range. The cursor keeps rotating, so a just-released port is reused last: a stray packet of a
 * finished call is unlikely to land on a new one.
 */
export class PortAllocator {
  readonly minPort: number;
  readonly maxPort: number;
  private readonly inUse = new Set<number>();
  private cursor: number;

  constructor(options: PortAllocatorOptions = {}) {
    const min = options.minPort ?? 10000;
    const max = options.maxPort ?? 20000;
    this.minPort = min % 2 === 0 ? min : min + 1;
    this.maxPort = max % 2 === 0 ? max : max - 1;
    if (this.minPort < 1024 || this.maxPort > 65534 || this.minPort > this.maxPort) {
      throw new RangeError(`invalid RTP port range ${min}-${max}`);
    }
    this.cursor = this.minPort;
  }

  /** Number of ports the range holds. */
  get capacity(): number {
    return (this.maxPort - this.minPort) / 2 + 1;
  }

  get inUseCount(): number {
    return this.inUse.size;
  }

  allocate(): number {
    const capacity = this.capacity;
    for (let tried = 0; tried < capacity; tried++) {
      const port = this.cursor;
      this.cursor = port + 2 > this.maxPort ? this.minPort : port + 2;
      if (!this.inUse.has(port)) {
        this.inUse.add(port);
        return port;
      }
    }
    throw new MediaError('ports_exhausted', `no free RTP port in ${this.minPort}-${this.maxPort}`);
  }

  release(port: number): void {
    this.inUse.delete(port);
  }
}
