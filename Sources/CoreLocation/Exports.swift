// Apple's CoreLocation module re-exports Foundation, and code written for it uses `Date`, `URL`,
// `NSNumber` or `DispatchQueue` after `import CoreLocation` alone; so does this one.
@_exported import Foundation
