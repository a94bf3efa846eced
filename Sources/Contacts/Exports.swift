// Apple's Contacts module re-exports Foundation, and code written for it uses `Date`, `URL`,
// `NSNumber` or `DispatchQueue` after `import Contacts` alone; so does this one.
@_exported import Foundation
