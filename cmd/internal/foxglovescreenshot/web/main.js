// Starts the Foxglove app (@foxglove/studio-base's App) as its web build
// does, with the Foxglove WebSocket data source only, SAINT.OS's layout as
// the current layout and no sign-in, onboarding or launch prompts. The
// connection comes from the page's URL (?ds=foxglove-websocket&ds.url=...).
"use strict";

// settings is an in-memory IAppConfiguration.
function settings(values) {
  const listeners = new Map();
  return {
    get: (key) => values[key],
    set: async (key, value) => {
      values[key] = value;
      for (const cb of listeners.get(key) ?? []) cb(value);
    },
    addChangeListener: (key, cb) => listeners.set(key, [...(listeners.get(key) ?? []), cb]),
    removeChangeListener: (key, cb) => listeners.set(key, (listeners.get(key) ?? []).filter((f) => f !== cb)),
  };
}

// layoutStorage is an in-memory ILayoutStorage holding one layout.
function layoutStorage(layout) {
  let layouts = [layout];
  return {
    list: async () => layouts,
    get: async (_ns, id) => layouts.find((l) => l.id === id),
    put: async (_ns, l) => {
      layouts = [...layouts.filter((x) => x.id !== l.id), l];
      return l;
    },
    delete: async (_ns, id) => {
      layouts = layouts.filter((l) => l.id !== id);
    },
    importLayouts: async () => {},
  };
}

async function main() {
  const data = await (await fetch("/layout.json")).json();
  const layout = {
    id: "saint",
    name: "SAINT.OS",
    permission: "CREATOR_WRITE",
    baseline: { data, savedAt: new Date().toISOString() },
    working: undefined,
    syncInfo: undefined,
  };
  // The profile selects the layout and marks the panels' settings tips as
  // seen, so none covers a panel.
  const panelTypes = Object.keys(data.configById).map((id) => id.split("!")[0]);
  localStorage.setItem(
    "studio.profile-data",
    JSON.stringify({ currentLayoutId: "saint", onboarding: { settingsTooltipShownForPanelTypes: panelTypes } }),
  );
  await initI18n();
  const config = settings({
    colorScheme: "dark",
    timezone: "UTC",
    launchPreference: "web",
    hideSignInPrompt: true,
    "ui.open-dialog-startup": false,
    "telemetry.telemetryEnabled": false,
    "telemetry.crashReportingEnabled": false,
    "updates.enabled": false,
  });
  ReactDOM.render(
    React.createElement(App, {
      deepLinks: [window.location.href],
      appConfiguration: config,
      dataSources: [new FoxgloveWebSocketDataSourceFactory()],
      layoutStorage: layoutStorage(layout),
      extensionLoaders: [],
      enableLaunchPreferenceScreen: false,
      enableGlobalCss: true,
    }),
    document.getElementById("root"),
  );
}

main().catch((err) => {
  document.body.textContent = "the Foxglove app did not start: " + err;
  console.error(err);
});
