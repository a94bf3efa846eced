import Geodesy
import LocationEngine
import LocationModel

/// `locationd`'s wire protocol, version 1: line-delimited JSON over a Unix stream socket
/// (DAEMON.md, "Protocol v1"; `docs/protocol.md`).
///
/// Rules of this codec (ours, documented for both sides):
/// - One JSON object per line, UTF-8, terminated by `\n` (a `\r` before it is tolerated); at most
///   ``DaemonLineReader/defaultLimit`` bytes without the terminator.
/// - Members the decoder does not know are ignored, so a newer peer may add fields. A required
///   member that is absent or `null` is `missingField`; a member of the wrong JSON type, an
///   integer that is not integral or out of range, an unknown enumeration value or an invalid
///   group name is `malformed`; an unknown `type` is `unknownType`.
/// - Numbers are doubles. Non-finite doubles are written as the strings `"NaN"`, `"Infinity"`,
///   `"-Infinity"`, which the decoder accepts wherever a double is expected.
/// - Optional values are written as `null` (never left out) so that the peer rebuilds the same
///   value; the decoder also accepts them absent.
public enum DaemonProtocol {
  /// The protocol version this code speaks.
  public static let version = 1

  /// Decodes one line (with or without its `\n` / `\r\n` terminator).
  ///
  /// Never traps, whatever the bytes: this is the fuzz target's entry point.
  /// - Parameters:
  ///   - line: The line's bytes.
  ///   - limit: The longest line accepted, bytes: 64 KiB for what a peer sends the daemon; a
  ///     client reading the daemon allows more (a welcome lists every region of the app, a
  ///     deferred batch many locations).
  /// - Returns: The message.
  /// - Throws: ``DaemonProtocolError`` with code `tooLarge`, `malformed`, `unknownType` or
  ///   `missingField`;
  ///   its `id` is set when the line was an object with an integral `id`.
  public static func decode(
    line: some Collection<UInt8>, limit: Int = DaemonLineReader.defaultLimit
  ) throws(DaemonProtocolError) -> DaemonMessage {
    var bytes = Array(line)
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    guard bytes.count <= limit else {
      throw DaemonProtocolError(code: .tooLarge, message: "a line is longer than \(limit) bytes")
    }
    let json = try DaemonJSON.parse(bytes)
    guard case .object(let members) = json else {
      throw DaemonProtocolError(code: .malformed, message: "a message must be a JSON object")
    }
    var id: Int?
    if case .number(let number) = members["id"] { id = Fields.integer(number) }
    do {
      return try decodeMessage(Fields(members: members, path: ""))
    } catch {
      var error = error
      if error.id == nil { error.id = id }
      throw error
    }
  }

  /// Encodes a message as one line, terminated by `\n`.
  /// - Parameter message: The message.
  /// - Returns: The line's bytes (UTF-8 JSON without raw newlines, then `\n`).
  public static func encode(_ message: DaemonMessage) -> [UInt8] {
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("type")
    writer.string(message.type)
    encodeBody(message, into: &writer)
    writer.endObject()
    writer.bytes.append(UInt8(ascii: "\n"))
    return writer.bytes
  }

  /// The JSON array of a `locations` message's fixes, encoded once for every manager that receives
  /// the same fixes (see ``encodeLocations(client:fixesJSON:)``).
  /// - Parameter fixes: The fixes.
  /// - Returns: The array's bytes.
  public static func encodeFixes(_ fixes: [Fix]) -> [UInt8] {
    var writer = JSONWriter()
    writer.beginArray()
    for fix in fixes { write(fix, into: &writer) }
    writer.endArray()
    return writer.bytes
  }

  /// A `locations` message around fixes already encoded with ``encodeFixes(_:)``: the same bytes
  /// as `encode(.locations(client:fixes))`, without encoding the fixes again (the daemon sends
  /// one fix to many managers).
  /// - Parameters:
  ///   - client: The manager's number.
  ///   - fixesJSON: The encoded fixes.
  /// - Returns: The line, newline-terminated.
  public static func encodeLocations(client: Int, fixesJSON: [UInt8]) -> [UInt8] {
    var bytes = Array(#"{"type":"locations","client":"#.utf8)
    bytes.reserveCapacity(bytes.count + 16 + fixesJSON.count)
    bytes.append(contentsOf: String(client).utf8)
    bytes.append(contentsOf: #","locations":"#.utf8)
    bytes.append(contentsOf: fixesJSON)
    bytes.append(contentsOf: "}\n".utf8)
    return bytes
  }

  /// Whether a region group name is valid: `manager`, or `monitor:` followed by a non-empty name.
  /// - Parameter group: The name.
  /// - Returns: Whether the protocol accepts it.
  public static func isValidGroup(_ group: String) -> Bool {
    group == "manager" || (group.hasPrefix("monitor:") && group.utf8.count > "monitor:".utf8.count)
  }

  // MARK: Decoding

  private static func decodeMessage(_ fields: Fields) throws(DaemonProtocolError) -> DaemonMessage {
    guard let typeValue = fields.members["type"], typeValue != .null else {
      throw DaemonProtocolError(code: .missingField, message: "the message has no \"type\"")
    }
    guard case .string(let type) = typeValue else {
      throw DaemonProtocolError(code: .malformed, message: "\"type\" must be a string")
    }
    let f = Fields(members: fields.members, path: "", type: type)
    switch type {
    case "hello":
      return .hello(version: try f.int("version"), role: try f.enumeration("role"))
    case "welcome":
      return .welcome(
        DaemonWelcome(
          version: try f.int("version"), app: try f.optionalString("app") ?? "",
          uid: try f.optionalInt("uid") ?? -1,
          authorization: try authorization(f.object("authorization")),
          regions: try regionEntries(f, "regions"),
          maximumRegionRadius: try f.optionalDouble("maximumRegionRadius")
            ?? RegionSpec.defaultMaximumRadius,
          headingAvailable: try f.optionalBool("headingAvailable") ?? false,
          significantChangeAvailable: try f.optionalBool("significantChangeAvailable") ?? false))
    case "error":
      return .error(
        DaemonErrorMessage(
          code: DaemonErrorCode(rawValue: try f.string("code")),
          message: try f.optionalString("message") ?? "", id: try f.optionalInt("id"),
          client: try f.optionalInt("client")))
    case "ping": return .ping(id: try f.int("id"))
    case "register": return .register(client: try f.int("client"))
    case "unregister": return .unregister(client: try f.int("client"))
    case "startUpdates":
      return .startUpdates(client: try f.int("client"), request: try updateRequest(f))
    case "changeRequest":
      return .changeRequest(client: try f.int("client"), request: try updateRequest(f))
    case "stopUpdates": return .stopUpdates(client: try f.int("client"))
    case "requestLocation":
      return .requestLocation(client: try f.int("client"), request: try updateRequest(f))
    case "startSignificantChanges": return .startSignificantChanges(client: try f.int("client"))
    case "stopSignificantChanges": return .stopSignificantChanges(client: try f.int("client"))
    case "requestAuthorization":
      return .requestAuthorization(always: try f.optionalBool("always") ?? false)
    case "addRegion":
      return .addRegion(
        client: try f.int("client"), group: try f.group(), region: try region(f.object("region")),
        initialState: try f.optionalState("initialState") ?? .unknown)
    case "removeRegion":
      return .removeRegion(group: try f.group(), identifier: try f.string("identifier"))
    case "requestRegionState":
      return .requestRegionState(
        client: try f.int("client"), group: try f.group(), identifier: try f.string("identifier"))
    case "startHeading":
      return .startHeading(
        client: try f.int("client"), filter: try f.optionalDouble("filter") ?? 1,
        orientation: try f.orientation())
    case "changeHeading":
      return .changeHeading(
        client: try f.int("client"), filter: try f.optionalDouble("filter") ?? 1,
        orientation: try f.orientation())
    case "stopHeading": return .stopHeading(client: try f.int("client"))
    case "allowDeferred":
      return .allowDeferred(
        client: try f.int("client"), distance: try f.double("distance"),
        timeout: try f.double("timeout"))
    case "disallowDeferred": return .disallowDeferred(client: try f.int("client"))
    case "ack": return .ack(sequence: try f.int64("sequence"))
    case "locations":
      var fixes: [Fix] = []
      for element in try f.objects("locations") { fixes.append(try fix(element)) }
      return .locations(client: try f.int("client"), fixes)
    case "authorization":
      return .authorization(try authorization(f.object("authorization")))
    case "regionEvents":
      var events: [DaemonRegionEvent] = []
      for element in try f.objects("events") { events.append(try regionEvent(element)) }
      return .regionEvents(
        group: try f.group(), events: events, sequence: try f.optionalInt64("sequence"))
    case "regionStarted":
      return .regionStarted(
        client: try f.int("client"), group: try f.group(), region: try region(f.object("region")))
    case "regionsChanged": return .regionsChanged
    case "regionList": return .regionList(try regionEntries(f, "regions"))
    case "refreshRegions": return .refreshRegions
    case "regionFailed":
      let failure: RegionFailure
      switch try f.string("failure") {
      case "invalid": failure = .invalid(try f.optionalString("message") ?? "")
      case "denied": failure = .denied
      default: throw f.malformed("failure", "must be \"invalid\" or \"denied\"")
      }
      return .regionFailed(
        client: try f.int("client"), group: try f.group(), identifier: try f.string("identifier"),
        failure: failure)
    case "regionState":
      return .regionState(
        client: try f.int("client"), group: try f.group(),
        event: try regionEvent(f.object("event")))
    case "heading":
      return .heading(client: try f.int("client"), try heading(f.object("heading")))
    case "headingInterference":
      return .headingInterference(
        client: try f.int("client"),
        HeadingInterference(
          measured: try f.double("measured"), expected: try f.optionalDouble("expected")))
    case "deferredFinished":
      return .deferredFinished(client: try f.int("client"), code: try f.optionalInt("code"))
    case "paused": return .paused(client: try f.int("client"))
    case "resumed": return .resumed(client: try f.int("client"))
    case "status": return .status(id: try f.int("id"))
    case "apps": return .apps(id: try f.int("id"))
    case "authorize":
      return .authorize(
        id: try f.int("id"), app: try f.string("app"), status: try f.enumeration("status"),
        accuracy: try f.optionalEnumeration("accuracy") ?? .full)
    case "regions": return .regions(id: try f.int("id"), app: try f.string("app"))
    case "sources": return .sources(id: try f.int("id"))
    case "services": return .services(id: try f.int("id"), enabled: try f.bool("enabled"))
    case "reply": return .reply(id: try f.int("id"), try reply(f))
    case "authorizationRequest":
      return .authorizationRequest(
        id: try f.int("id"), app: try f.string("app"), always: try f.optionalBool("always") ?? false
      )
    case "authorizationDecision":
      return .authorizationDecision(
        id: try f.int("id"), status: try f.enumeration("status"),
        accuracy: try f.optionalEnumeration("accuracy") ?? .full)
    default:
      throw DaemonProtocolError(
        code: .unknownType, message: "unknown message type \"\(DaemonProtocolError.clip(type))\"")
    }
  }

  private static func updateRequest(_ f: Fields) throws(DaemonProtocolError) -> DaemonUpdateRequest
  {
    guard let r = try f.optionalObject("request") else { return DaemonUpdateRequest() }
    return DaemonUpdateRequest(
      desiredAccuracy: try r.optionalDouble("desiredAccuracy") ?? -1,
      distanceFilter: try r.optionalDouble("distanceFilter") ?? -1,
      pausesAutomatically: try r.optionalBool("pausesAutomatically") ?? true,
      activity: try r.optionalEnumeration("activity") ?? .other)
  }

  /// Decodes a `FIX` object.
  static func fix(_ f: Fields) throws(DaemonProtocolError) -> Fix {
    var quality = FixQuality.autonomous
    if let name = try f.optionalString("quality") {
      guard let known = FixQuality.allCases.first(where: { $0.wireName == name }) else {
        throw f.malformed("quality", "unknown fix quality")
      }
      quality = known
    }
    return Fix(
      latitude: try f.double("latitude"), longitude: try f.double("longitude"),
      altitude: try f.optionalDouble("altitude"),
      ellipsoidalAltitude: try f.optionalDouble("ellipsoidalAltitude"),
      horizontalAccuracy: try f.double("horizontalAccuracy"),
      verticalAccuracy: try f.optionalDouble("verticalAccuracy") ?? -1,
      speed: try f.optionalDouble("speed") ?? -1,
      speedAccuracy: try f.optionalDouble("speedAccuracy") ?? -1,
      course: try f.optionalDouble("course") ?? -1,
      courseAccuracy: try f.optionalDouble("courseAccuracy") ?? -1, time: try f.double("time"),
      quality: quality, satellitesUsed: try f.optionalInt("satellitesUsed"),
      floor: try f.optionalInt("floor"), isSimulated: try f.optionalBool("isSimulated") ?? false,
      source: try f.optionalString("source") ?? "")
  }

  static func region(_ f: Fields) throws(DaemonProtocolError) -> RegionSpec {
    RegionSpec(
      identifier: try f.string("identifier"), latitude: try f.double("latitude"),
      longitude: try f.double("longitude"), radius: try f.double("radius"),
      hysteresis: try f.optionalDouble("hysteresis") ?? RegionSpec.defaultHysteresis,
      notifyOnEntry: try f.optionalBool("notifyOnEntry") ?? true,
      notifyOnExit: try f.optionalBool("notifyOnExit") ?? true)
  }

  static func authorization(_ f: Fields) throws(DaemonProtocolError) -> AuthorizationSnapshot {
    guard let status = AuthorizationStatus(rawValue: try f.int32("status")) else {
      throw f.malformed("status", "must be 0...4")
    }
    guard let accuracy = AccuracyAuthorization(rawValue: try f.optionalInt("accuracy") ?? 0) else {
      throw f.malformed("accuracy", "must be 0 or 1")
    }
    return AuthorizationSnapshot(
      status: status, accuracy: accuracy,
      servicesEnabled: try f.optionalBool("servicesEnabled") ?? true)
  }

  static func regionEvent(_ f: Fields) throws(DaemonProtocolError) -> DaemonRegionEvent {
    let kind: RegionEvent.Kind
    switch try f.string("kind") {
    case "enter": kind = .entered
    case "exit": kind = .exited
    case "determined": kind = .determined(try f.state("state"))
    default: throw f.malformed("kind", "must be \"enter\", \"exit\" or \"determined\"")
    }
    return DaemonRegionEvent(
      RegionEvent(
        identifier: try f.string("identifier"), kind: kind,
        notifyOnEntry: try f.optionalBool("notifyOnEntry") ?? true,
        notifyOnExit: try f.optionalBool("notifyOnExit") ?? true),
      date: try f.double("date"), region: try f.optionalObject("region").map(region))
  }

  static func heading(_ f: Fields) throws(DaemonProtocolError) -> DeliveredHeading {
    var declination: MagneticDeclination?
    if let d = try f.optionalObject("declination") {
      declination = MagneticDeclination(
        degrees: try d.double("degrees"), modelName: try d.optionalString("model") ?? "")
    }
    var limitation: HeadingLimitation?
    if let l = try f.optionalObject("limitation") {
      switch try l.string("kind") {
      case "locationUpdatesOff": limitation = .locationUpdatesOff
      case "noLocation": limitation = .noLocation
      case "magneticModelUnavailable":
        let code: MagneticModelError.Code
        switch try l.optionalString("code") ?? "outOfValidRange" {
        case "outOfValidRange": code = .outOfValidRange
        case "invalidInput": code = .invalidInput
        default: throw l.malformed("code", "must be \"outOfValidRange\" or \"invalidInput\"")
        }
        limitation = .magneticModelUnavailable(
          MagneticModelError(code: code, message: try l.optionalString("message") ?? ""))
      default:
        throw l.malformed(
          "kind", "must be \"locationUpdatesOff\", \"noLocation\" or \"magneticModelUnavailable\"")
      }
    }
    return DeliveredHeading(
      magneticHeading: try f.double("magneticHeading"), trueHeading: try f.double("trueHeading"),
      accuracy: try f.double("accuracy"), x: try f.optionalDouble("x"),
      y: try f.optionalDouble("y"), z: try f.optionalDouble("z"), time: try f.double("time"),
      source: try f.optionalString("source") ?? "",
      isSimulated: try f.optionalBool("isSimulated") ?? false, declination: declination,
      limitation: limitation)
  }

  private static func regionEntries(_ f: Fields, _ key: String) throws(DaemonProtocolError)
    -> [DaemonRegionEntry]
  {
    guard f.has(key) else { return [] }
    var entries: [DaemonRegionEntry] = []
    for element in try f.objects(key) {
      entries.append(
        DaemonRegionEntry(
          group: try element.group(), region: try region(element.object("region")),
          state: try element.optionalState("state") ?? .unknown))
    }
    return entries
  }

  private static func sourceStatuses(_ f: Fields, _ key: String) throws(DaemonProtocolError)
    -> [DaemonSourceStatus]
  {
    var sources: [DaemonSourceStatus] = []
    for s in try f.objects(key) {
      sources.append(
        DaemonSourceStatus(
          url: try s.string("url"), running: try s.optionalBool("running") ?? false,
          power: try s.optionalString("power") ?? "",
          onSeconds: try s.optionalDouble("onSeconds") ?? 0,
          users: try s.optionalInt("users"), failure: try s.optionalString("failure")))
    }
    return sources
  }

  private static func reply(_ f: Fields) throws(DaemonProtocolError) -> DaemonReply {
    if f.has("status") {
      let s = try f.object("status")
      var clients: [DaemonClientInfo] = []
      for c in try s.objects("clients") {
        clients.append(
          DaemonClientInfo(
            app: try c.string("app"), pid: try c.optionalInt("pid") ?? 0,
            uid: try c.optionalInt("uid") ?? -1, managers: try c.optionalInt("managers") ?? 0,
            role: try c.optionalEnumeration("role") ?? .app))
      }
      var apps: [String] = []
      for element in try s.array("apps") {
        guard case .string(let app) = element else {
          throw s.malformed("apps", "must be an array of strings")
        }
        apps.append(app)
      }
      return .status(
        DaemonStatus(
          sources: try sourceStatuses(s, "sources"), clients: clients, apps: apps,
          servicesEnabled: try s.optionalBool("servicesEnabled") ?? true))
    }
    if f.has("apps") {
      var apps: [DaemonAppInfo] = []
      for a in try f.objects("apps") {
        apps.append(
          DaemonAppInfo(
            app: try a.string("app"), authorization: try authorization(a.object("authorization")),
            regions: try a.optionalInt("regions") ?? 0,
            pendingEvents: try a.optionalInt("pendingEvents") ?? 0,
            connected: try a.optionalBool("connected") ?? false))
      }
      return .apps(apps)
    }
    if f.has("regions") { return .regions(try regionEntries(f, "regions")) }
    if f.has("sources") { return .sources(try sourceStatuses(f, "sources")) }
    return .done
  }

  // MARK: Encoding

  private static func encodeBody(_ message: DaemonMessage, into w: inout JSONWriter) {
    switch message {
    case .hello(let version, let role):
      w.key("version")
      w.int(version)
      w.key("role")
      w.string(role.rawValue)
    case .welcome(let welcome):
      w.key("version")
      w.int(welcome.version)
      w.key("app")
      w.string(welcome.app)
      w.key("uid")
      w.int(welcome.uid)
      w.key("authorization")
      write(welcome.authorization, into: &w)
      w.key("regions")
      write(welcome.regions, into: &w)
      w.key("maximumRegionRadius")
      w.double(welcome.maximumRegionRadius)
      w.key("headingAvailable")
      w.bool(welcome.headingAvailable)
      w.key("significantChangeAvailable")
      w.bool(welcome.significantChangeAvailable)
    case .error(let error):
      if let client = error.client {
        w.key("client")
        w.int(client)
      }
      if let id = error.id {
        w.key("id")
        w.int(id)
      }
      w.key("code")
      w.string(error.code.rawValue)
      w.key("message")
      w.string(error.message)
    case .register(let client), .unregister(let client), .stopUpdates(let client),
      .startSignificantChanges(let client), .stopSignificantChanges(let client),
      .stopHeading(let client), .disallowDeferred(let client), .paused(let client),
      .resumed(let client):
      w.key("client")
      w.int(client)
    case .startUpdates(let client, let request), .changeRequest(let client, let request),
      .requestLocation(let client, let request):
      w.key("client")
      w.int(client)
      w.key("request")
      w.beginObject()
      w.key("desiredAccuracy")
      w.double(request.desiredAccuracy)
      w.key("distanceFilter")
      w.double(request.distanceFilter)
      w.key("pausesAutomatically")
      w.bool(request.pausesAutomatically)
      w.key("activity")
      w.string(request.activity.rawValue)
      w.endObject()
    case .requestAuthorization(let always):
      w.key("always")
      w.bool(always)
    case .addRegion(let client, let group, let region, let initialState):
      w.key("client")
      w.int(client)
      w.key("group")
      w.string(group)
      w.key("region")
      write(region, into: &w)
      w.key("initialState")
      w.string(initialState.wireName)
    case .removeRegion(let group, let identifier):
      w.key("group")
      w.string(group)
      w.key("identifier")
      w.string(identifier)
    case .requestRegionState(let client, let group, let identifier):
      w.key("client")
      w.int(client)
      w.key("group")
      w.string(group)
      w.key("identifier")
      w.string(identifier)
    case .startHeading(let client, let filter, let orientation),
      .changeHeading(let client, let filter, let orientation):
      w.key("client")
      w.int(client)
      w.key("filter")
      w.double(filter)
      w.key("orientation")
      w.int(Int(orientation.rawValue))
    case .allowDeferred(let client, let distance, let timeout):
      w.key("client")
      w.int(client)
      w.key("distance")
      w.double(distance)
      w.key("timeout")
      w.double(timeout)
    case .ack(let sequence):
      w.key("sequence")
      w.int64(sequence)
    case .locations(let client, let fixes):
      w.key("client")
      w.int(client)
      w.key("locations")
      w.beginArray()
      for fix in fixes { write(fix, into: &w) }
      w.endArray()
    case .authorization(let snapshot):
      w.key("authorization")
      write(snapshot, into: &w)
    case .regionEvents(let group, let events, let sequence):
      w.key("group")
      w.string(group)
      w.key("events")
      w.beginArray()
      for event in events { write(event, into: &w) }
      w.endArray()
      if let sequence {
        w.key("sequence")
        w.int64(sequence)
      }
    case .regionStarted(let client, let group, let region):
      w.key("client")
      w.int(client)
      w.key("group")
      w.string(group)
      w.key("region")
      write(region, into: &w)
    case .regionsChanged, .refreshRegions:
      break
    case .regionList(let entries):
      w.key("regions")
      write(entries, into: &w)
    case .regionFailed(let client, let group, let identifier, let failure):
      w.key("client")
      w.int(client)
      w.key("group")
      w.string(group)
      w.key("identifier")
      w.string(identifier)
      w.key("failure")
      switch failure {
      case .invalid(let message):
        w.string("invalid")
        w.key("message")
        w.string(message)
      case .denied:
        w.string("denied")
        w.key("message")
        w.string("the app may not monitor regions")
      }
    case .regionState(let client, let group, let event):
      w.key("client")
      w.int(client)
      w.key("group")
      w.string(group)
      w.key("event")
      write(event, into: &w)
    case .heading(let client, let heading):
      w.key("client")
      w.int(client)
      w.key("heading")
      write(heading, into: &w)
    case .headingInterference(let client, let interference):
      w.key("client")
      w.int(client)
      w.key("measured")
      w.double(interference.measured)
      w.key("expected")
      optional(interference.expected, into: &w)
    case .deferredFinished(let client, let code):
      w.key("client")
      w.int(client)
      w.key("code")
      if let code { w.int(code) } else { w.null() }
    case .status(let id), .apps(let id), .sources(let id), .ping(let id):
      w.key("id")
      w.int(id)
    case .authorize(let id, let app, let status, let accuracy):
      w.key("id")
      w.int(id)
      w.key("app")
      w.string(app)
      w.key("status")
      w.string(status.rawValue)
      w.key("accuracy")
      w.string(accuracy.rawValue)
    case .regions(let id, let app):
      w.key("id")
      w.int(id)
      w.key("app")
      w.string(app)
    case .services(let id, let enabled):
      w.key("id")
      w.int(id)
      w.key("enabled")
      w.bool(enabled)
    case .reply(let id, let body):
      w.key("id")
      w.int(id)
      write(body, into: &w)
    case .authorizationRequest(let id, let app, let always):
      w.key("id")
      w.int(id)
      w.key("app")
      w.string(app)
      w.key("always")
      w.bool(always)
    case .authorizationDecision(let id, let status, let accuracy):
      w.key("id")
      w.int(id)
      w.key("status")
      w.string(status.rawValue)
      w.key("accuracy")
      w.string(accuracy.rawValue)
    }
  }

  private static func optional(_ value: Double?, into w: inout JSONWriter) {
    if let value { w.double(value) } else { w.null() }
  }

  private static func optional(_ value: Int?, into w: inout JSONWriter) {
    if let value { w.int(value) } else { w.null() }
  }

  private static func optional(_ value: String?, into w: inout JSONWriter) {
    if let value { w.string(value) } else { w.null() }
  }

  /// Writes a `FIX`: every member of `Fix`, optionals as `null`.
  static func write(_ fix: Fix, into w: inout JSONWriter) {
    w.beginObject()
    w.key("latitude")
    w.double(fix.latitude)
    w.key("longitude")
    w.double(fix.longitude)
    w.key("altitude")
    optional(fix.altitude, into: &w)
    w.key("ellipsoidalAltitude")
    optional(fix.ellipsoidalAltitude, into: &w)
    w.key("horizontalAccuracy")
    w.double(fix.horizontalAccuracy)
    w.key("verticalAccuracy")
    w.double(fix.verticalAccuracy)
    w.key("speed")
    w.double(fix.speed)
    w.key("speedAccuracy")
    w.double(fix.speedAccuracy)
    w.key("course")
    w.double(fix.course)
    w.key("courseAccuracy")
    w.double(fix.courseAccuracy)
    w.key("time")
    w.double(fix.time)
    w.key("quality")
    w.string(fix.quality.wireName)
    w.key("satellitesUsed")
    optional(fix.satellitesUsed, into: &w)
    w.key("floor")
    optional(fix.floor, into: &w)
    w.key("isSimulated")
    w.bool(fix.isSimulated)
    w.key("source")
    w.string(fix.source)
    w.endObject()
  }

  static func write(_ region: RegionSpec, into w: inout JSONWriter) {
    w.beginObject()
    w.key("identifier")
    w.string(region.identifier)
    w.key("latitude")
    w.double(region.latitude)
    w.key("longitude")
    w.double(region.longitude)
    w.key("radius")
    w.double(region.radius)
    w.key("hysteresis")
    w.double(region.hysteresis)
    w.key("notifyOnEntry")
    w.bool(region.notifyOnEntry)
    w.key("notifyOnExit")
    w.bool(region.notifyOnExit)
    w.endObject()
  }

  static func write(_ snapshot: AuthorizationSnapshot, into w: inout JSONWriter) {
    w.beginObject()
    w.key("status")
    w.int(Int(snapshot.status.rawValue))
    w.key("accuracy")
    w.int(snapshot.accuracy.rawValue)
    w.key("servicesEnabled")
    w.bool(snapshot.servicesEnabled)
    w.endObject()
  }

  static func write(_ event: DaemonRegionEvent, into w: inout JSONWriter) {
    w.beginObject()
    w.key("identifier")
    w.string(event.event.identifier)
    w.key("kind")
    switch event.event.kind {
    case .entered:
      w.string("enter")
      w.key("state")
      w.string(RegionState.inside.wireName)
    case .exited:
      w.string("exit")
      w.key("state")
      w.string(RegionState.outside.wireName)
    case .determined(let state):
      w.string("determined")
      w.key("state")
      w.string(state.wireName)
    }
    w.key("date")
    w.double(event.date)
    w.key("notifyOnEntry")
    w.bool(event.event.notifyOnEntry)
    w.key("notifyOnExit")
    w.bool(event.event.notifyOnExit)
    if let region = event.region {
      w.key("region")
      write(region, into: &w)
    }
    w.endObject()
  }

  static func write(_ entries: [DaemonRegionEntry], into w: inout JSONWriter) {
    w.beginArray()
    for entry in entries {
      w.beginObject()
      w.key("group")
      w.string(entry.group)
      w.key("region")
      write(entry.region, into: &w)
      w.key("state")
      w.string(entry.state.wireName)
      w.endObject()
    }
    w.endArray()
  }

  static func write(_ heading: DeliveredHeading, into w: inout JSONWriter) {
    w.beginObject()
    w.key("magneticHeading")
    w.double(heading.magneticHeading)
    w.key("trueHeading")
    w.double(heading.trueHeading)
    w.key("accuracy")
    w.double(heading.accuracy)
    w.key("x")
    optional(heading.x, into: &w)
    w.key("y")
    optional(heading.y, into: &w)
    w.key("z")
    optional(heading.z, into: &w)
    w.key("time")
    w.double(heading.time)
    w.key("source")
    w.string(heading.source)
    w.key("isSimulated")
    w.bool(heading.isSimulated)
    w.key("declination")
    if let declination = heading.declination {
      w.beginObject()
      w.key("degrees")
      w.double(declination.degrees)
      w.key("model")
      w.string(declination.modelName)
      w.endObject()
    } else {
      w.null()
    }
    w.key("limitation")
    switch heading.limitation {
    case nil:
      w.null()
    case .locationUpdatesOff:
      w.beginObject()
      w.key("kind")
      w.string("locationUpdatesOff")
      w.endObject()
    case .noLocation:
      w.beginObject()
      w.key("kind")
      w.string("noLocation")
      w.endObject()
    case .magneticModelUnavailable(let error):
      w.beginObject()
      w.key("kind")
      w.string("magneticModelUnavailable")
      w.key("code")
      switch error.code {
      case .outOfValidRange: w.string("outOfValidRange")
      case .invalidInput: w.string("invalidInput")
      }
      w.key("message")
      w.string(error.message)
      w.endObject()
    }
    w.endObject()
  }

  static func write(_ sources: [DaemonSourceStatus], into w: inout JSONWriter) {
    w.beginArray()
    for source in sources {
      w.beginObject()
      w.key("url")
      w.string(source.url)
      w.key("running")
      w.bool(source.running)
      w.key("power")
      w.string(source.power)
      w.key("onSeconds")
      w.double(source.onSeconds)
      w.key("users")
      optional(source.users, into: &w)
      w.key("failure")
      optional(source.failure, into: &w)
      w.endObject()
    }
    w.endArray()
  }

  static func write(_ body: DaemonReply, into w: inout JSONWriter) {
    switch body {
    case .done:
      break
    case .status(let status):
      w.key("status")
      w.beginObject()
      w.key("sources")
      write(status.sources, into: &w)
      w.key("clients")
      w.beginArray()
      for client in status.clients {
        w.beginObject()
        w.key("app")
        w.string(client.app)
        w.key("pid")
        w.int(client.pid)
        w.key("uid")
        w.int(client.uid)
        w.key("managers")
        w.int(client.managers)
        w.key("role")
        w.string(client.role.rawValue)
        w.endObject()
      }
      w.endArray()
      w.key("apps")
      w.beginArray()
      for app in status.apps { w.string(app) }
      w.endArray()
      w.key("servicesEnabled")
      w.bool(status.servicesEnabled)
      w.endObject()
    case .apps(let apps):
      w.key("apps")
      w.beginArray()
      for app in apps {
        w.beginObject()
        w.key("app")
        w.string(app.app)
        w.key("authorization")
        write(app.authorization, into: &w)
        w.key("regions")
        w.int(app.regions)
        w.key("pendingEvents")
        w.int(app.pendingEvents)
        w.key("connected")
        w.bool(app.connected)
        w.endObject()
      }
      w.endArray()
    case .regions(let entries):
      w.key("regions")
      write(entries, into: &w)
    case .sources(let sources):
      w.key("sources")
      write(sources, into: &w)
    }
  }
}

extension FixQuality {
  /// The name written in a `FIX`'s `quality` member: the case name.
  public var wireName: String {
    switch self {
    case .none: "none"
    case .autonomous: "autonomous"
    case .differential: "differential"
    case .precise: "precise"
    case .rtkFixed: "rtkFixed"
    case .rtkFloat: "rtkFloat"
    case .estimated: "estimated"
    case .manual: "manual"
    case .simulated: "simulated"
    case .network: "network"
    }
  }
}

extension RegionState {
  /// The name on the wire: `unknown`, `inside` or `outside`.
  public var wireName: String {
    switch self {
    case .unknown: "unknown"
    case .inside: "inside"
    case .outside: "outside"
    }
  }
}

/// Typed access to the members of a decoded object, with errors that name the member.
struct Fields {
  let members: [String: DaemonJSON]
  /// The member path of this object inside the message ("" for the message itself).
  let path: String
  /// The message type, for error messages.
  var type: String = ""

  /// An integer's value when a double is integral and within ±2^53.
  static func integer(_ number: Double) -> Int? {
    guard number.isFinite, number == number.rounded(), abs(number) <= 9_007_199_254_740_992 else {
      return nil
    }
    return Int(number)
  }

  private func name(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

  func malformed(_ key: String, _ problem: String) -> DaemonProtocolError {
    DaemonProtocolError(
      code: .malformed,
      message: "\(type.isEmpty ? "" : "\(type): ")\"\(name(key))\" \(problem)")
  }

  private func missing(_ key: String) -> DaemonProtocolError {
    DaemonProtocolError(
      code: .missingField,
      message: "\(type.isEmpty ? "" : "\(type): ")missing field \"\(name(key))\"")
  }

  /// Whether the member is present and not `null`.
  func has(_ key: String) -> Bool {
    guard let value = members[key] else { return false }
    return value != .null
  }

  /// A member that must be present: its value, or `missingField`.
  private func required<T>(_ key: String, _ value: T?) throws(DaemonProtocolError) -> T {
    guard let value else { throw missing(key) }
    return value
  }

  private func value(_ key: String) -> DaemonJSON? {
    guard let value = members[key], value != .null else { return nil }
    return value
  }

  func optionalDouble(_ key: String) throws(DaemonProtocolError) -> Double? {
    switch value(key) {
    case nil: return nil
    case .number(let number): return number
    case .string("NaN"): return .nan
    case .string("Infinity"): return .infinity
    case .string("-Infinity"): return -.infinity
    default: throw malformed(key, "must be a number")
    }
  }

  func double(_ key: String) throws(DaemonProtocolError) -> Double {
    try required(key, optionalDouble(key))
  }

  func optionalInt(_ key: String) throws(DaemonProtocolError) -> Int? {
    switch value(key) {
    case nil: return nil
    case .number(let number):
      guard let integer = Self.integer(number) else { throw malformed(key, "must be an integer") }
      return integer
    default: throw malformed(key, "must be an integer")
    }
  }

  func int(_ key: String) throws(DaemonProtocolError) -> Int {
    try required(key, optionalInt(key))
  }

  func optionalInt64(_ key: String) throws(DaemonProtocolError) -> Int64? {
    try optionalInt(key).map { Int64($0) }
  }

  func int64(_ key: String) throws(DaemonProtocolError) -> Int64 { Int64(try int(key)) }

  func optionalInt32(_ key: String) throws(DaemonProtocolError) -> Int32? {
    guard let value = try optionalInt(key) else { return nil }
    guard let narrow = Int32(exactly: value) else { throw malformed(key, "is out of range") }
    return narrow
  }

  func int32(_ key: String) throws(DaemonProtocolError) -> Int32 {
    try required(key, optionalInt32(key))
  }

  func optionalBool(_ key: String) throws(DaemonProtocolError) -> Bool? {
    switch value(key) {
    case nil: return nil
    case .bool(let flag): return flag
    default: throw malformed(key, "must be true or false")
    }
  }

  func bool(_ key: String) throws(DaemonProtocolError) -> Bool {
    try required(key, optionalBool(key))
  }

  func optionalString(_ key: String) throws(DaemonProtocolError) -> String? {
    switch value(key) {
    case nil: return nil
    case .string(let text): return text
    default: throw malformed(key, "must be a string")
    }
  }

  func string(_ key: String) throws(DaemonProtocolError) -> String {
    try required(key, optionalString(key))
  }

  func optionalObject(_ key: String) throws(DaemonProtocolError) -> Fields? {
    switch value(key) {
    case nil: return nil
    case .object(let members): return Fields(members: members, path: name(key), type: type)
    default: throw malformed(key, "must be an object")
    }
  }

  func object(_ key: String) throws(DaemonProtocolError) -> Fields {
    try required(key, optionalObject(key))
  }

  func array(_ key: String) throws(DaemonProtocolError) -> [DaemonJSON] {
    switch value(key) {
    case nil: throw missing(key)
    case .array(let elements): return elements
    default: throw malformed(key, "must be an array")
    }
  }

  func objects(_ key: String) throws(DaemonProtocolError) -> [Fields] {
    var result: [Fields] = []
    for (index, element) in try array(key).enumerated() {
      guard case .object(let members) = element else {
        throw malformed(key, "must be an array of objects")
      }
      result.append(Fields(members: members, path: "\(name(key))[\(index)]", type: type))
    }
    return result
  }

  func optionalEnumeration<E: RawRepresentable & CaseIterable>(_ key: String)
    throws(DaemonProtocolError) -> E? where E.RawValue == String
  {
    guard let raw = try optionalString(key) else { return nil }
    guard let value = E(rawValue: raw) else {
      let names = E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
      throw malformed(key, "must be one of \(names)")
    }
    return value
  }

  func enumeration<E: RawRepresentable & CaseIterable>(_ key: String) throws(DaemonProtocolError)
    -> E where E.RawValue == String
  {
    try required(key, optionalEnumeration(key))
  }

  func optionalState(_ key: String) throws(DaemonProtocolError) -> RegionState? {
    guard let raw = try optionalString(key) else { return nil }
    guard let state = RegionState.allCases.first(where: { $0.wireName == raw }) else {
      throw malformed(key, "must be \"unknown\", \"inside\" or \"outside\"")
    }
    return state
  }

  func state(_ key: String) throws(DaemonProtocolError) -> RegionState {
    try required(key, optionalState(key))
  }

  /// The `group` member: `manager` or `monitor:NAME`.
  /// `orientation`: a `CLDeviceOrientation` raw value (default portrait); one Apple does not
  /// define is `unknown`.
  func orientation() throws(DaemonProtocolError) -> HeadingOrientation {
    HeadingOrientation(rawValue: try optionalInt32("orientation") ?? 1) ?? .unknown
  }

  func group() throws(DaemonProtocolError) -> String {
    let group = try string("group")
    guard DaemonProtocol.isValidGroup(group) else {
      throw malformed("group", "must be \"manager\" or \"monitor:NAME\"")
    }
    return group
  }
}
