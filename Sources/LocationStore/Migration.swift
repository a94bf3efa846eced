/// One named schema change. Migrations are append-only: a released migration is never edited,
/// reordered or removed; a change to the schema is a new migration at the end of `Migration.all`.
struct Migration: Sendable {
  /// The name recorded in the `migrations` table; unique and stable forever.
  let name: String
  /// The SQL that performs the change (several statements separated by semicolons).
  let sql: String

  /// Every migration this version knows, in the order they are applied.
  ///
  /// Schema notes:
  /// - `regions` is `WITHOUT ROWID` keyed by (app, region_group, identifier): a region is replaced by
  ///   identifier within its owner and group, and a full scan returns rows in key order without a
  ///   separate index.
  /// - `events.sequence` is `AUTOINCREMENT` so that a sequence number is never reused, even after
  ///   every event was deleted: a late acknowledgement (`deleteEvents(throughSequence:)`) can never
  ///   delete an event appended after it was computed. Delivery is exactly once.
  /// - The last known location keeps every `Fix` field in its own column.
  static let all: [Migration] = [
    Migration(
      name: "0001-initial",
      sql: """
        CREATE TABLE authorization (
          app TEXT NOT NULL PRIMARY KEY,
          status INTEGER NOT NULL,
          accuracy INTEGER NOT NULL,
          updated REAL NOT NULL
        );
        CREATE TABLE settings (
          key TEXT NOT NULL PRIMARY KEY,
          value TEXT NOT NULL
        );
        CREATE TABLE last_location (
          app TEXT NOT NULL PRIMARY KEY,
          latitude REAL NOT NULL,
          longitude REAL NOT NULL,
          altitude REAL,
          ellipsoidal_altitude REAL,
          horizontal_accuracy REAL NOT NULL,
          vertical_accuracy REAL NOT NULL,
          speed REAL NOT NULL,
          speed_accuracy REAL NOT NULL,
          course REAL NOT NULL,
          course_accuracy REAL NOT NULL,
          time REAL NOT NULL,
          quality INTEGER NOT NULL,
          satellites_used INTEGER,
          floor INTEGER,
          is_simulated INTEGER NOT NULL,
          source TEXT NOT NULL
        );
        CREATE TABLE regions (
          app TEXT NOT NULL,
          region_group TEXT NOT NULL,
          identifier TEXT NOT NULL,
          latitude REAL NOT NULL,
          longitude REAL NOT NULL,
          radius REAL NOT NULL,
          hysteresis REAL NOT NULL,
          notify_on_entry INTEGER NOT NULL,
          notify_on_exit INTEGER NOT NULL,
          state INTEGER NOT NULL,
          state_time REAL,
          extra TEXT,
          PRIMARY KEY (app, region_group, identifier)
        ) WITHOUT ROWID;
        CREATE TABLE events (
          sequence INTEGER PRIMARY KEY AUTOINCREMENT,
          app TEXT NOT NULL,
          kind TEXT NOT NULL,
          payload TEXT NOT NULL,
          time REAL NOT NULL
        );
        CREATE INDEX events_by_app ON events (app, sequence);
        """
    ),
    // An "allow once" decision is stored as once (issue 14, F4): it ends with the app's last
    // connection, and a daemon that starts (after a crash too) ends every one.
    Migration(
      name: "0002-authorization-once",
      sql: "ALTER TABLE authorization ADD COLUMN once INTEGER NOT NULL DEFAULT 0;"
    ),
    Migration(
      // The apps that monitor visits (`startMonitoringVisits()`): `locationd` detects their
      // visits while they are away, and keeps the visits in `events` until they are collected.
      name: "0003-visit-monitoring",
      sql: """
        CREATE TABLE visit_monitoring (
          app TEXT NOT NULL PRIMARY KEY,
          since REAL NOT NULL
        ) WITHOUT ROWID;
        """
    ),
    Migration(
      // What the device learned about the Wi-Fi access points it heard with good fixes (issue
      // 23): the machine's, not an app's. A weighted centroid kept as sums (`AccessPointRecord`);
      // the BSSID's 48 bits are the key.
      name: "0004-wifi-access-points",
      sql: """
        CREATE TABLE wifi_access_points (
          bssid INTEGER NOT NULL PRIMARY KEY,
          weight REAL NOT NULL,
          x REAL NOT NULL,
          y REAL NOT NULL,
          z REAL NOT NULL,
          observations INTEGER NOT NULL,
          first_seen REAL NOT NULL,
          last_seen REAL NOT NULL,
          mobile INTEGER NOT NULL DEFAULT 0
        );
        """
    ),
    Migration(
      // What `locationd` publishes over MQTT (issue 18), committed here first and deleted when
      // the broker has acknowledged it: store-and-forward. `kind` 0 is a position (the oldest
      // are thinned when the outbox is full), 1 an event (a region transition: never thinned).
      name: "0005-publish-outbox",
      sql: """
        CREATE TABLE publish_outbox (
          sequence INTEGER PRIMARY KEY AUTOINCREMENT,
          topic TEXT NOT NULL,
          payload TEXT NOT NULL,
          kind INTEGER NOT NULL,
          retain INTEGER NOT NULL DEFAULT 0,
          time REAL NOT NULL
        );
        CREATE INDEX publish_outbox_by_kind ON publish_outbox (kind, sequence);
        """
    ),
    Migration(
      // The device's track history (issue 18, `history = yes` in `locationd.conf`): the machine's
      // own positions, not an app's, read in time order (`history_by_time`, which holds the rowid
      // `sequence` too, so ties at one time keep the order they were recorded in) and pruned past
      // the retention. `altitude` is NULL when unknown; the other measures are negative then.
      name: "0006-track-history",
      sql: """
        CREATE TABLE track_history (
          sequence INTEGER PRIMARY KEY,
          time REAL NOT NULL,
          latitude REAL NOT NULL,
          longitude REAL NOT NULL,
          altitude REAL,
          horizontal_accuracy REAL NOT NULL,
          vertical_accuracy REAL NOT NULL,
          speed REAL NOT NULL,
          course REAL NOT NULL
        );
        CREATE INDEX history_by_time ON track_history (time);
        """
    ),
    Migration(
      // When each region was first stored (issue 18: OwnTracks identifies a waypoint by its
      // creation time, `tst`, which its transitions repeat as `wtst`). Regions stored before this
      // migration take the time it ran.
      name: "0007-region-created",
      sql: """
        ALTER TABLE regions ADD COLUMN created REAL;
        UPDATE regions SET created = CAST(strftime('%s', 'now') AS REAL);
        """
    ),
  ]
}
