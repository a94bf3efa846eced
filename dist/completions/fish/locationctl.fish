# fish completion for locationctl (CoreLocation for Linux).

# The app identifiers a running daemon knows, from `locationctl apps --json` on the socket the
# command line names (none when no daemon answers).
function __corelocation_apps
    set -l words (commandline -opc)
    set -l socket
    for i in (seq 2 (count $words))
        switch $words[$i]
            case --system
                set socket --system
            case --socket
                set socket --socket $words[(math $i + 1)]
            case '--socket=*'
                set socket $words[$i]
        end
    end
    $words[1] $socket apps --json 2>/dev/null | string match -ar '"app":"(?:[^"\\\\]|\\\\.)*"' |
        string replace -r '^"app":"(.*)"$' '$1' | string replace -ar '\\\\(.)' '$1'
end

# The command and arguments typed so far, without options and their values.
function __corelocation_locationctl_words
    set -l words (commandline -opc)
    set -e words[1]
    set -l skip 0
    for word in $words
        if test $skip = 1
            set skip 0
        else if contains -- $word --socket --since --until --output -o
            set skip 1
        else if not string match -q -- '-*' $word
            echo $word
        end
    end
end

function __corelocation_locationctl_at
    set -l words (__corelocation_locationctl_words)
    test (count $words) -eq $argv[1]; or return 1
    test (count $argv) -eq 1; or contains -- $words[1] $argv[2..-1]
end

complete -c locationctl -f
complete -c locationctl -n '__corelocation_locationctl_at 0' -a status -d 'Sources, connected clients and apps'
complete -c locationctl -n '__corelocation_locationctl_at 0' -a apps -d 'Every app with its authorization'
complete -c locationctl -n '__corelocation_locationctl_at 0' -a authorize -d 'Store a decision for an app'
complete -c locationctl -n '__corelocation_locationctl_at 0' -a regions -d "An app's monitored regions"
complete -c locationctl -n '__corelocation_locationctl_at 0' -a sources -d "The daemon's location sources"
complete -c locationctl -n '__corelocation_locationctl_at 0' -a services -d 'Switch location services on or off'
complete -c locationctl -n '__corelocation_locationctl_at 0' -a wifi -d 'The Wi-Fi access points learned'
complete -c locationctl -n '__corelocation_locationctl_at 0' -a export -d 'Write the track history as GPX or GeoJSON'
complete -c locationctl -n '__corelocation_locationctl_at 0' -a agent -d 'Answer authorization requests here'
complete -c locationctl -n '__corelocation_locationctl_at 0' -a help -d 'Show help'
complete -c locationctl -n '__corelocation_locationctl_at 1 authorize regions' -a '(__corelocation_apps)'
complete -c locationctl -n '__corelocation_locationctl_at 1 services' -a 'on off'
complete -c locationctl -n '__corelocation_locationctl_at 1 wifi' -a 'forget import'
complete -c locationctl -n '__corelocation_locationctl_at 2 authorize' -a 'always when-in-use denied reset'
complete -c locationctl -s j -l json -d 'Print JSON instead of a table'
complete -c locationctl -l socket -r -F -d 'The daemon socket'
complete -c locationctl -l system -d 'The system daemon socket'
complete -c locationctl -l approximate -d 'With authorize: reduced accuracy'
complete -c locationctl -s h -l help -d 'Show help'
complete -c locationctl -l since -x -a '1h 24h 7d 30d now' -d 'With export: the earliest time'
complete -c locationctl -l until -x -a '1h 24h 7d now' -d 'With export: the latest time, excluded'
complete -c locationctl -l gpx -d 'With export: write GPX 1.1'
complete -c locationctl -l geojson -d 'With export: write GeoJSON'
complete -c locationctl -s o -l output -r -F -d 'With export: the file written'
