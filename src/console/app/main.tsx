/** The console's entry: renders the app into #root (index.html loads this as its only script). */
import { render } from "preact";
import { App } from "./app.tsx";

render(<App />, document.getElementById("root")!);
