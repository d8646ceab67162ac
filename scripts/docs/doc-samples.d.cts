/** See doc-samples.cjs. */
export declare const DOC_PAGES: ReadonlyMap<string, string>;
export declare function samplesOf(markdown: string): Map<string, string>;
export declare function writeDocSamples(dir: string, pages?: ReadonlyMap<string, string>): Map<string, Map<string, string>>;
