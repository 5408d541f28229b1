#!/usr/bin/env bash
# The local mail stack for tests and demos: Postfix (SMTP in) delivering over LMTP to
# Dovecot (IMAP out), on loopback only, with virtual users under one test domain.
# Nothing can leave the machine: every domain but the test domain goes to an error transport.
# Mail to a user of the test domain may carry a detail after "+" (user+detail@DOMAIN); it is
# delivered to that user's INBOX. Mail to any address at the bounce domain is accepted, then
# refused by Dovecot (it has no users there), so Postfix returns a delivery status
# notification to the sender, as when a remote server knows no such user.
# Postfix accepts mail from 127.0.0.0/8 without AUTH, and offers AUTH (PLAIN, LOGIN; checked
# by Dovecot) for clients that want it. tempfail@DOMAIN is always refused with a 450.
# LMTP mode: `route` sends all mail for a domain of its own (a service's domain, say
# svc.DOMAIN) over LMTP to a service listening for it (pbem serve with inbound_url =
# "lmtp://..."), by Postfix's transport_maps; the test domain itself is still delivered to
# Dovecot, so services read over IMAP and services fed over LMTP share the stack.
#
# Usage (as root):
#   mailstack.sh [start]                   install if missing, write config, start or reload,
#                                          then check the SMTP banner and an IMAP login
#   mailstack.sh stop                      stop Postfix and Dovecot
#   mailstack.sh restart [dovecot|postfix] stop and start one daemon (default: both)
#   mailstack.sh status                    exit 0 if both answer, 1 otherwise
#   mailstack.sh adduser LOCALPART PASSWORD
#                                          add (or reset) LOCALPART@DOMAIN, usable at once
#   mailstack.sh route SVCDOMAIN NEXTHOP   deliver mail for SVCDOMAIN (a subdomain of DOMAIN)
#                                          over LMTP to NEXTHOP: HOST:PORT or /abs/socket
#   mailstack.sh unroute SVCDOMAIN         forget that route
#   mailstack.sh env                       print `export` lines describing the stack
#
# Settings (environment; defaults in brackets):
#   MAILSTACK_DOMAIN [pbem.test]  MAILSTACK_HOST [127.0.0.1]  MAILSTACK_SMTP_PORT [10025]
#   MAILSTACK_IMAP_PORT [10143]   MAILSTACK_LMTP_PORT [10024]
#   MAILSTACK_DIR [/var/lib/pbem-mailstack]  (configs, users, logs and mailboxes)
#   MAILSTACK_BOUNCE_DOMAIN [nowhere.DOMAIN]
set -euo pipefail

DOMAIN=${MAILSTACK_DOMAIN:-pbem.test}
HOST=${MAILSTACK_HOST:-127.0.0.1}
SMTP_PORT=${MAILSTACK_SMTP_PORT:-10025}
IMAP_PORT=${MAILSTACK_IMAP_PORT:-10143}
LMTP_PORT=${MAILSTACK_LMTP_PORT:-10024}
STATE_DIR=${MAILSTACK_DIR:-/var/lib/pbem-mailstack}
BOUNCE_DOMAIN=${MAILSTACK_BOUNCE_DOMAIN:-nowhere.$DOMAIN}

PACKAGES=(postfix dovecot-imapd dovecot-lmtpd)
DOVECOT_CONF=$STATE_DIR/dovecot.conf
USERS_DIR=$STATE_DIR/users.d
VMAILBOX_FILE=$STATE_DIR/vmailbox
MAIL_DIR=$STATE_DIR/mail
LOG_DIR=$STATE_DIR/log
RUN_DIR=$STATE_DIR/run
LOCK_FILE=$STATE_DIR/.lock
PROBE_USER=mailstack-probe
PROBE_SECRET_FILE=$STATE_DIR/probe.secret
LISTENER_FILE=$STATE_DIR/postfix-listener
ROUTES_DIR=$STATE_DIR/lmtp-routes.d
ROUTES_FILE=$STATE_DIR/lmtp-routes

log() { printf 'mailstack: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

need_root() {
    [[ $(id -u) -eq 0 ]] || die "run as root (it installs packages and starts system daemons)"
}

validate_settings() {
    [[ $DOMAIN =~ ^[A-Za-z0-9.-]+$ ]] || die "bad MAILSTACK_DOMAIN: $DOMAIN"
    [[ $BOUNCE_DOMAIN =~ ^[A-Za-z0-9.-]+$ && ${BOUNCE_DOMAIN,,} != "${DOMAIN,,}" ]] ||
        die "bad MAILSTACK_BOUNCE_DOMAIN: $BOUNCE_DOMAIN"
    [[ $HOST =~ ^127\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "MAILSTACK_HOST must be a loopback address"
    local port
    for port in "$SMTP_PORT" "$IMAP_PORT" "$LMTP_PORT"; do
        if [[ ! $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
            die "bad port: $port"
        fi
    done
}

# ---------------------------------------------------------------- install

packages_installed() {
    local pkg status
    for pkg in "${PACKAGES[@]}"; do
        status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
        [[ $status == "install ok installed" ]] || return 1
    done
    command -v postconf >/dev/null && command -v dovecot >/dev/null
}

install_packages() {
    packages_installed && return 0
    log "installing ${PACKAGES[*]}"
    debconf-set-selections <<EOF
postfix postfix/main_mailer_type select Internet Site
postfix postfix/mailname string mail.$DOMAIN
EOF
    # Keep the packages' own services from starting during the install: this stack runs
    # its own configuration. Only a policy file that this script created is removed again.
    local policy=/usr/sbin/policy-rc.d made_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 0755 "$policy"
        made_policy=1
    fi
    local apt_opts=(-y -q --no-install-recommends -o Dpkg::Options::=--force-confdef
        -o Dpkg::Options::=--force-confold)
    local ok=0
    DEBIAN_FRONTEND=noninteractive apt-get install "${apt_opts[@]}" "${PACKAGES[@]}" \
        >"$STATE_DIR/install.log" 2>&1 && ok=1
    if ((!ok)); then
        log "install failed; refreshing the package lists and trying again"
        apt-get update -q >>"$STATE_DIR/install.log" 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install "${apt_opts[@]}" "${PACKAGES[@]}" \
            >>"$STATE_DIR/install.log" 2>&1 && ok=1
    fi
    ((made_policy)) && rm -f "$policy"
    ((ok)) || { tail -n 20 "$STATE_DIR/install.log" >&2; die "could not install ${PACKAGES[*]}"; }
}

ensure_vmail_user() {
    if ! getent group vmail >/dev/null; then
        groupadd --system vmail
    fi
    if ! getent passwd vmail >/dev/null; then
        useradd --system --gid vmail --home-dir "$MAIL_DIR" --no-create-home \
            --shell /usr/sbin/nologin vmail
    fi
}

ensure_dirs() {
    mkdir -p "$STATE_DIR" "$LOG_DIR" "$RUN_DIR"
    chmod 0755 "$STATE_DIR" "$RUN_DIR"
    install -d -m 0750 -o vmail -g vmail "$MAIL_DIR"
    install -d -m 0750 -o root -g dovecot "$USERS_DIR"
    touch "$LOCK_FILE"
}

# ---------------------------------------------------------------- users

vmail_ids() {
    VMAIL_UID=$(id -u vmail)
    VMAIL_GID=$(id -g vmail)
}

# Write one user (under the lock): a passwd-file of its own for Dovecot, and a recipient
# line for Postfix. Dovecot rereads a shared passwd-file at most once a second, so a user
# added right after a lookup would stay unknown for up to a second; a file per user is
# opened on its first lookup instead, and is usable at once. Postfix daemons restart on
# their next connection when a map they use changes.
put_user() {
    local localpart=$1 password=$2
    local address="${localpart,,}@${DOMAIN,,}"
    vmail_ids
    local line="$address:{PLAIN}$password:$VMAIL_UID:$VMAIL_GID::$MAIL_DIR/${DOMAIN,,}/${localpart,,}::"
    local tmp
    tmp=$(mktemp "$USERS_DIR/.new.XXXXXX")
    printf '%s\n' "$line" >"$tmp"
    chown root:dovecot "$tmp"
    chmod 0640 "$tmp"
    mv -f "$tmp" "$USERS_DIR/$address"
    write_vmailbox
}

# Postfix's recipient table, built aside and renamed into place: a daemon that has the old
# file open sees it unlinked and restarts before its next connection. (Rebuilt in place,
# two changes within one second could go unnoticed: daemons compare whole-second mtimes.)
write_vmailbox() {
    local tmp map_type suffix
    map_type=$(postconf -h default_database_type)
    case $map_type in
        hash | btree) suffix=db ;;
        *) suffix=$map_type ;;
    esac
    tmp=$(mktemp "$STATE_DIR/.vmailbox.XXXXXX")
    find "$USERS_DIR" -mindepth 1 -maxdepth 1 -type f ! -name '.*' -printf '%f OK\n' |
        sort >"$tmp"
    chmod 0644 "$tmp"
    postmap "$map_type:$tmp"
    mv -f "$tmp" "$VMAILBOX_FILE"
    mv -f "$tmp.$suffix" "$VMAILBOX_FILE.$suffix"
}

# Postfix's table of LMTP routes (for relay_domains and transport_maps): one file per
# route under ROUTES_DIR, the table built aside and renamed into place as the vmailbox is.
write_routes() {
    local tmp map_type suffix
    map_type=$(postconf -h default_database_type)
    case $map_type in
        hash | btree) suffix=db ;;
        *) suffix=$map_type ;;
    esac
    mkdir -p "$ROUTES_DIR"
    tmp=$(mktemp "$STATE_DIR/.lmtp-routes.XXXXXX")
    find "$ROUTES_DIR" -mindepth 1 -maxdepth 1 -type f ! -name '.*' -exec cat {} + |
        sort >"$tmp"
    chmod 0644 "$tmp"
    postmap "$map_type:$tmp"
    mv -f "$tmp" "$ROUTES_FILE"
    mv -f "$tmp.$suffix" "$ROUTES_FILE.$suffix"
}

validate_route() {
    local domain=$1 nexthop=$2
    [[ ${domain,,} =~ ^[a-z0-9][a-z0-9-]*(\.[a-z0-9-]+)*$ && ${domain,,} == *".${DOMAIN,,}" ]] ||
        die "bad service domain '$domain' (a subdomain of $DOMAIN, e.g. svc.$DOMAIN)"
    [[ ${domain,,} != "${BOUNCE_DOMAIN,,}" ]] || die "$domain is the bounce domain"
    [[ $nexthop =~ ^127\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+$ || $nexthop =~ ^/[A-Za-z0-9._/-]+$ ]] ||
        die "bad next hop '$nexthop' (127.x.y.z:PORT or /abs/socket)"
}

cmd_route() {
    (($# == 2)) || die "usage: mailstack.sh route SVCDOMAIN HOST:PORT|/abs/socket"
    need_root
    validate_route "$1" "$2"
    [[ -f $DOVECOT_CONF ]] || die "the stack was never started: run 'mailstack.sh start' first"
    local target
    if [[ $2 == /* ]]; then target="lmtp:unix:$2"; else target="lmtp:inet:$2"; fi
    exec 9>>"$LOCK_FILE"
    flock 9
    mkdir -p "$ROUTES_DIR"
    printf '%s %s\n' "${1,,}" "$target" >"$ROUTES_DIR/${1,,}"
    write_routes
    flock -u 9
    printf '%s %s\n' "${1,,}" "$target"
}

cmd_unroute() {
    (($# == 1)) || die "usage: mailstack.sh unroute SVCDOMAIN"
    need_root
    exec 9>>"$LOCK_FILE"
    flock 9
    rm -f "$ROUTES_DIR/${1,,}"
    write_routes
    flock -u 9
}

validate_user() {
    local localpart=$1 password=$2
    [[ $localpart =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ && ${#localpart} -le 64 ]] ||
        die "bad local part '$localpart' (up to 64 letters, digits and . _ -)"
    [[ -n $password && $password != *:* && $password != *[[:space:]]* ]] ||
        die "bad password (empty, or has ':' or white space)"
}

cmd_adduser() {
    (($# == 2)) || die "usage: mailstack.sh adduser LOCALPART PASSWORD"
    need_root
    validate_user "$1" "$2"
    [[ -f $DOVECOT_CONF ]] || die "the stack was never started: run 'mailstack.sh start' first"
    exec 9>>"$LOCK_FILE"
    flock 9
    put_user "$1" "$2"
    flock -u 9
    printf '%s@%s\n' "${1,,}" "${DOMAIN,,}"
}

probe_secret() {
    if [[ ! -s $PROBE_SECRET_FILE ]]; then
        (umask 077 && od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$PROBE_SECRET_FILE")
    fi
    cat "$PROBE_SECRET_FILE"
}

# ---------------------------------------------------------------- Dovecot

dovecot_minor() {
    dovecot --version | awk '{ split($1, v, "."); print v[1] "." v[2] }'
}

write_dovecot_conf() {
    vmail_ids
    local version tmp
    version=$(dovecot_minor)
    tmp=$(mktemp "$DOVECOT_CONF.XXXXXX")
    if [[ $version == 2.3 || $version == 2.2 ]]; then
        cat >"$tmp" <<EOF
# Written by deploy/mailstack.sh for Dovecot $version; rewritten on every start.
protocols = imap lmtp
listen = $HOST
instance_name = pbem-mailstack
base_dir = $RUN_DIR/dovecot
state_dir = $STATE_DIR/dovecot-state
log_path = $LOG_DIR/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
login_trusted_networks = 127.0.0.0/8
auth_username_format = %Lu
mail_location = maildir:~/Maildir
recipient_delimiter = +
lmtp_save_to_detail_mailbox = no
first_valid_uid = $VMAIL_UID
first_valid_gid = $VMAIL_GID
default_process_limit = 500
default_client_limit = 2000

namespace inbox {
  inbox = yes
  separator = /
}

passdb {
  driver = passwd-file
  args = scheme=PLAIN $USERS_DIR/%Lu
}
userdb {
  driver = passwd-file
  args = $USERS_DIR/%Lu
}

protocol imap {
  mail_max_userip_connections = 1000
}

service imap-login {
  inet_listener imap {
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    port = $LMTP_PORT
  }
}
# No growing delays after failed logins: tests log in with wrong passwords on purpose.
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service auth {
  unix_listener auth-postfix {
    mode = 0660
    user = postfix
    group = postfix
  }
}
EOF
    else
        cat >"$tmp" <<EOF
# Written by deploy/mailstack.sh for Dovecot $version; rewritten on every start.
dovecot_config_version = 2.4.0
dovecot_storage_version = 2.4.0
protocols = imap lmtp
listen = $HOST
instance_name = pbem-mailstack
base_dir = $RUN_DIR/dovecot
state_dir = $STATE_DIR/dovecot-state
log_path = $LOG_DIR/dovecot.log
ssl = no
auth_allow_cleartext = yes
auth_mechanisms = plain login
auth_failure_delay = 0
login_trusted_networks = 127.0.0.0/8
mail_driver = maildir
mail_path = ~/Maildir
recipient_delimiter = +
lmtp_save_to_detail_mailbox = no
first_valid_uid = $VMAIL_UID
first_valid_gid = $VMAIL_GID
default_process_limit = 500
default_client_limit = 2000

namespace inbox {
  inbox = yes
  separator = /
}

passdb passwd-file {
  passwd_file_path = $USERS_DIR/%{user | lower}
}
userdb passwd-file {
  passwd_file_path = $USERS_DIR/%{user | lower}
}

protocol imap {
  mail_max_userip_connections = 1000
}

service imap-login {
  inet_listener imap {
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    port = $LMTP_PORT
  }
}
# No growing delays after failed logins: tests log in with wrong passwords on purpose.
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service auth {
  unix_listener auth-postfix {
    mode = 0660
    user = postfix
    group = postfix
  }
}
EOF
    fi
    mkdir -p "$STATE_DIR/dovecot-state"
    chmod 0644 "$tmp"
    if [[ -f $DOVECOT_CONF ]] && cmp -s "$tmp" "$DOVECOT_CONF"; then
        rm -f "$tmp"
        return 1 # unchanged
    fi
    mv -f "$tmp" "$DOVECOT_CONF"
    return 0
}

dovecot_pid() {
    local pidfile=$RUN_DIR/dovecot/master.pid pid
    [[ -s $pidfile ]] || return 1
    pid=$(<"$pidfile")
    kill -0 "$pid" 2>/dev/null || return 1
    printf '%s\n' "$pid"
}

dovecot_running() { dovecot_pid >/dev/null; }

start_dovecot() {
    local changed=$1
    if dovecot_running; then
        if ((changed)); then
            log "reloading Dovecot"
            dovecot -c "$DOVECOT_CONF" reload </dev/null >/dev/null 2>>"$LOG_DIR/start.log" 9>&-
        fi
        return 0
    fi
    log "starting Dovecot"
    # The daemons must not hold on to the caller's stdout and stderr (a caller reading
    # them to the end would wait forever).
    if ! dovecot -c "$DOVECOT_CONF" </dev/null >/dev/null 2>>"$LOG_DIR/start.log" 9>&-; then
        tail -n 20 "$LOG_DIR/dovecot.log" >&2 || true
        die "Dovecot did not start (config: $DOVECOT_CONF)"
    fi
}

stop_dovecot() {
    local pid i
    pid=$(dovecot_pid) || return 0
    log "stopping Dovecot"
    dovecot -c "$DOVECOT_CONF" stop 2>/dev/null || kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------- Postfix

postfix_signature() {
    { postconf -n; postconf -M | sort; } 2>/dev/null | md5sum
}

configure_postfix() {
    local map_type listener old
    map_type=$(postconf -h default_database_type)
    listener="$HOST:$SMTP_PORT"
    [[ -f /etc/aliases ]] || printf 'postmaster: root\n' >/etc/aliases
    [[ -f $VMAILBOX_FILE ]] || write_vmailbox
    [[ -f $ROUTES_FILE ]] || write_routes
    local settings=(
        "compatibility_level = 3.6"
        "myhostname = mail.$DOMAIN"
        "mydomain = $DOMAIN"
        "myorigin = \$myhostname"
        "mydestination = localhost"
        "inet_interfaces = loopback-only"
        "inet_protocols = ipv4"
        "mynetworks = 127.0.0.0/8"
        "mynetworks_style = host"
        "relayhost ="
        "default_transport = error:mail outside $DOMAIN is disabled on this test stack"
        "recipient_delimiter = +"
        "relay_domains = $BOUNCE_DOMAIN, $map_type:$ROUTES_FILE"
        "relay_transport = lmtp:inet:$HOST:$LMTP_PORT"
        "transport_maps = $map_type:$ROUTES_FILE"
        "virtual_mailbox_domains = $DOMAIN"
        "virtual_mailbox_maps = $map_type:$VMAILBOX_FILE"
        "virtual_transport = lmtp:inet:$HOST:$LMTP_PORT"
        "smtpd_relay_restrictions = permit_mynetworks, permit_sasl_authenticated, reject_unauth_destination"
        "smtpd_recipient_restrictions = check_recipient_access inline:{ { tempfail@$DOMAIN = 450 4.7.1 test address: try again later } }, permit_mynetworks, permit_sasl_authenticated, reject_unauth_destination"
        "smtpd_sasl_auth_enable = yes"
        "smtpd_sasl_type = dovecot"
        "smtpd_sasl_path = $RUN_DIR/dovecot/auth-postfix"
        "smtpd_tls_auth_only = no"
        "smtpd_reject_unlisted_recipient = yes"
        "smtpd_tls_security_level = none"
        "smtp_tls_security_level = none"
        "lmtp_tls_security_level = none"
        # LMTP connections to this host (Dovecot, and the services routed here) are kept
        # in Postfix's connection cache between deliveries, not only under a backlog: a
        # service pays for a new connection (and aiosmtpd's set-up) once, not per mail.
        "lmtp_connection_cache_destinations = $HOST"
        "smtpd_banner = \$myhostname ESMTP pbem-mailstack"
        "biff = no"
        "append_dot_mydomain = no"
        "message_size_limit = 52428800"
        # Mail deferred while Dovecot restarts is retried within seconds, not minutes, and
        # Dovecot is not held for dead longer than that.
        "queue_run_delay = 1s"
        "minimal_backoff_time = 1s"
        "maximal_backoff_time = 5s"
        # smtpd exits at once when Dovecot's SASL socket is gone (Dovecot restarting); the
        # master would then refuse to start it again for a minute.
        "service_throttle_time = 1s"
        "smtpd_client_connection_count_limit = 0"
        "smtpd_client_connection_rate_limit = 0"
        "anvil_rate_time_unit = 60s"
        "maillog_file_prefixes = /var, /dev/stdout, $LOG_DIR"
        "maillog_file = $LOG_DIR/postfix.log"
    )
    # Postfix tools pause for a moment after main.cf changes, so write only what differs.
    local current item changes=()
    current=$(postconf -n)
    for item in "${settings[@]}"; do
        grep -q -x -F -- "$item" <<<"$current" || changes+=("$item")
    done
    if ((${#changes[@]})); then
        postconf -e "${changes[@]}"
    fi
    # Rewriting master.cf reorders it, so touch it only when something is to change.
    if postconf -F '*/*/chroot' | grep -q -v ' = n$'; then
        postconf -F '*/*/chroot = n'
    fi
    # Our own SMTP listener; the standard one on :25 is switched off.
    if [[ -n $(postconf -M smtp/inet 2>/dev/null) ]]; then
        postconf -MX smtp/inet
    fi
    if [[ -f $LISTENER_FILE ]]; then
        old=$(<"$LISTENER_FILE")
        if [[ $old != "$listener" && -n $(postconf -M "$old/inet" 2>/dev/null) ]]; then
            postconf -MX "$old/inet"
        fi
    fi
    if [[ -z $(postconf -M "$listener/inet" 2>/dev/null) ]]; then
        postconf -M "$listener/inet=$listener inet n - n - - smtpd"
    fi
    printf '%s\n' "$listener" >"$LISTENER_FILE"
    if [[ -z $(postconf -M postlog/unix-dgram 2>/dev/null) ]]; then
        postconf -M "postlog/unix-dgram=postlog unix-dgram n - n - 1 postlogd"
    fi
    [[ -f /etc/aliases.db || -f /etc/aliases.lmdb || -f /etc/aliases.cdb ]] || newaliases
}

postfix_running() { postfix status >/dev/null 2>&1; }

start_postfix() {
    local changed=$1
    if postfix_running; then
        if ((changed)); then
            log "reloading Postfix"
            postfix reload </dev/null >/dev/null 2>&1 9>&-
        fi
        return 0
    fi
    log "starting Postfix"
    postsuper -d ALL >/dev/null 2>&1 || true
    postfix check >/dev/null 2>&1 || postfix set-permissions >/dev/null 2>&1 || true
    if ! postfix start </dev/null >/dev/null 2>&1 9>&-; then
        tail -n 20 "$LOG_DIR/postfix.log" >&2 || true
        die "Postfix did not start"
    fi
}

stop_postfix() {
    postfix_running || return 0
    log "stopping Postfix"
    postfix stop >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------- checks

# Read one line from fd 3 with a timeout; prints it without the CR.
read_line() {
    local line
    IFS= read -r -t 5 line <&3 || return 1
    printf '%s\n' "${line%$'\r'}"
}

check_smtp() {
    local banner
    exec 3<>"/dev/tcp/$HOST/$SMTP_PORT" || return 1
    banner=$(read_line) || { exec 3>&-; return 1; }
    printf 'QUIT\r\n' >&3 || true
    exec 3>&-
    [[ $banner == 220* ]]
}

check_imap() {
    local user=$1 password=$2 line
    exec 3<>"/dev/tcp/$HOST/$IMAP_PORT" || return 1
    line=$(read_line) || { exec 3>&-; return 1; }
    if [[ $line != "* OK"* ]]; then exec 3>&-; return 1; fi
    printf 'a1 LOGIN "%s" "%s"\r\n' "$user" "$password" >&3
    while line=$(read_line); do
        case $line in
            "a1 OK"*) printf 'a2 LOGOUT\r\n' >&3; exec 3>&-; return 0 ;;
            "a1 "*) exec 3>&-; return 1 ;;
        esac
    done
    exec 3>&-
    return 1
}

check_imap_greeting() {
    local line
    exec 3<>"/dev/tcp/$HOST/$IMAP_PORT" || return 1
    line=$(read_line) || { exec 3>&-; return 1; }
    printf 'a1 LOGOUT\r\n' >&3 || true
    exec 3>&-
    [[ $line == "* OK"* ]]
}

check_lmtp() {
    local banner
    exec 3<>"/dev/tcp/$HOST/$LMTP_PORT" || return 1
    banner=$(read_line) || { exec 3>&-; return 1; }
    printf 'QUIT\r\n' >&3 || true
    exec 3>&-
    [[ $banner == 220* ]]
}

# Wait until SMTP, LMTP and an IMAP login of the probe user work (up to ~15 s).
verify_stack() {
    local secret i
    secret=$(probe_secret)
    for ((i = 0; i < 150; i++)); do
        if check_smtp 2>/dev/null && check_lmtp 2>/dev/null &&
            check_imap "$PROBE_USER@$DOMAIN" "$secret" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# ---------------------------------------------------------------- commands

cmd_start() {
    need_root
    validate_settings
    mkdir -p "$STATE_DIR"
    install_packages
    ensure_vmail_user
    ensure_dirs
    exec 9>>"$LOCK_FILE"
    flock 9
    local dovecot_changed=0 postfix_changed=0 before
    write_dovecot_conf && dovecot_changed=1
    local secret
    secret=$(probe_secret)
    if ! grep -q -F -- "$PROBE_USER@${DOMAIN,,}:{PLAIN}$secret:" \
        "$USERS_DIR/$PROBE_USER@${DOMAIN,,}" 2>/dev/null; then
        put_user "$PROBE_USER" "$secret"
    fi
    before=$(postfix_signature)
    configure_postfix
    [[ $(postfix_signature) == "$before" ]] || postfix_changed=1
    start_dovecot "$dovecot_changed"
    start_postfix "$postfix_changed"
    flock -u 9
    if ! verify_stack; then
        tail -n 10 "$LOG_DIR/dovecot.log" >&2 2>/dev/null || true
        tail -n 10 "$LOG_DIR/postfix.log" >&2 2>/dev/null || true
        die "the stack does not answer (SMTP $HOST:$SMTP_PORT, IMAP $HOST:$IMAP_PORT)"
    fi
    log "ready: SMTP $HOST:$SMTP_PORT, IMAP $HOST:$IMAP_PORT, LMTP $HOST:$LMTP_PORT, domain $DOMAIN"
}

cmd_stop() {
    need_root
    if command -v postfix >/dev/null; then stop_postfix; fi
    if command -v dovecot >/dev/null && [[ -f $DOVECOT_CONF ]]; then stop_dovecot; fi
}

cmd_restart() {
    need_root
    local which=${1:-all}
    case $which in
        dovecot) stop_dovecot; start_dovecot 0 ;;
        postfix) stop_postfix; start_postfix 0 ;;
        all) cmd_stop; cmd_start; return ;;
        *) die "usage: mailstack.sh restart [dovecot|postfix]" ;;
    esac
    verify_stack || die "the stack does not answer after restarting $which"
}

# Works without root too: then Dovecot is judged by its greeting, not by a login.
cmd_status() {
    local ok=0 secret
    if check_smtp 2>/dev/null; then
        echo "postfix: running (SMTP $HOST:$SMTP_PORT)"
    else
        echo "postfix: not answering on $HOST:$SMTP_PORT"
        ok=1
    fi
    if [[ -r $PROBE_SECRET_FILE ]]; then
        secret=$(<"$PROBE_SECRET_FILE")
        check_imap "$PROBE_USER@$DOMAIN" "$secret" 2>/dev/null || ok=2
    else
        check_imap_greeting 2>/dev/null || ok=2
    fi
    if ((ok == 2)) || ! check_lmtp 2>/dev/null; then
        echo "dovecot: not answering on $HOST:$IMAP_PORT (IMAP) or $HOST:$LMTP_PORT (LMTP)"
        ok=1
    else
        echo "dovecot: running (IMAP $HOST:$IMAP_PORT, LMTP $HOST:$LMTP_PORT)"
    fi
    return $ok
}

cmd_env() {
    cat <<EOF
export MAILSTACK_DOMAIN=$DOMAIN
export MAILSTACK_HOST=$HOST
export MAILSTACK_SMTP_PORT=$SMTP_PORT
export MAILSTACK_IMAP_PORT=$IMAP_PORT
export MAILSTACK_LMTP_PORT=$LMTP_PORT
export MAILSTACK_DIR=$STATE_DIR
export MAILSTACK_BOUNCE_DOMAIN=$BOUNCE_DOMAIN
export MAILSTACK_DOVECOT_CONF=$DOVECOT_CONF
export MAILSTACK_MAIL_DIR=$MAIL_DIR
export MAILSTACK_LMTP_ROUTES=$ROUTES_FILE
EOF
}

main() {
    local cmd=${1:-start}
    (($# > 0)) && shift
    case $cmd in
        start) cmd_start ;;
        stop) cmd_stop ;;
        restart) cmd_restart "$@" ;;
        status) cmd_status ;;
        adduser) cmd_adduser "$@" ;;
        route) cmd_route "$@" ;;
        unroute) cmd_unroute "$@" ;;
        env) cmd_env ;;
        -h | --help | help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" ;;
        *) die "unknown command '$cmd' (start, stop, restart, status, adduser, route, unroute, env)" ;;
    esac
}

main "$@"
