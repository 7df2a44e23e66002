// The part of madge 8's API the import-cycle test uses (madge ships no types).
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[];
    detectiveOptions?: Record<string, Record<string, boolean>>;
  }
  interface MadgeResult {
    circular(): string[][];
    warnings(): { skipped: string[] };
    obj(): Record<string, string[]>;
  }
  export default function madge(path: string, config?: MadgeConfig): Promise<MadgeResult>;
}
