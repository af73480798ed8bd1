// Types of `binary.js` for the extension's TypeScript.
export interface Platform {
  os: string;
  cpu: string;
  libc?: string;
  target: string;
}
export declare const PLATFORMS: Record<string, Platform>;
export declare function platformKey(): string;
export declare function platformPackage(key?: string): string;
export declare function packagedBinary(key?: string): string | undefined;
export declare function pathBinary(env?: NodeJS.ProcessEnv): string | undefined;
export declare function explicitBinary(env?: NodeJS.ProcessEnv): string | undefined;
