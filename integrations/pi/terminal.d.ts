// Types of `terminal.js` for the extension's TypeScript.
export declare function escapeText(text: string): string;
export declare function escapeLines(text: string): string;
export declare function escapeBytes(bytes: Uint8Array): string;
