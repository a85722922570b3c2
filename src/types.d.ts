declare module "*.sql" {
  const text: string;
  export default text;
}

/** A file imported `with { type: "file" }`: its path (inside the executable once compiled). */
declare module "*/standalone.js" {
  const path: string;
  export default path;
}
