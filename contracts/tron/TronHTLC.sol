// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";

/**
 * @title TronHTLC
 * @notice Hash time-locked contract for one TRC-20 token on Tron, with the interface of Garden's HTLC
 * (v3) as Garden's Tron client calls it: `initiate` with or without destination data,
 * `initiateOnBehalf`, the relayer's gasless `initiateWithSignature`, `redeem`, `refund`, `instantRefund`.
 * No native TRX.
 * @dev Tron differs from Ethereum in one place that matters here: TIP-712 signs over
 * `block.chainid & 0xffffffff` (the TVM's chain id may be wider than 32 bits), so this contract builds
 * its EIP-712 domain itself instead of through OpenZeppelin's EIP712, and uses the same 32-bit chain id
 * in order ids. Compiled for the paris EVM version (no PUSH0, no MCOPY), which the TVM runs; OpenZeppelin's
 * SignatureChecker and MessageHashUtils use MCOPY, so signatures are checked here with ECDSA and ERC-1271.
 * Tokens that take a fee on transfer or rebase are not supported: the order records `amount`.
 */
contract TronHTLC {
    using SafeERC20 for IERC20;

    struct Order {
        address initiator;
        address redeemer;
        uint256 initiatedAt;
        uint256 timelock;
        uint256 amount;
        uint256 fulfilledAt;
    }

    string public constant name = "HTLC";
    string public constant version = "3";

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant INITIATE_TYPEHASH =
        keccak256("Initiate(address redeemer,uint256 timelock,uint256 amount,bytes32 secretHash)");
    bytes32 private constant REFUND_TYPEHASH = keccak256("Refund(bytes32 orderId)");

    /// @notice The TRC-20 token this contract locks.
    IERC20 public immutable token;

    /// @notice Orders by id. An order is initiated when `initiator` is set and settled when `fulfilledAt` is.
    mapping(bytes32 => Order) public orders;

    event Initiated(bytes32 indexed orderID, bytes32 indexed secretHash, uint256 indexed amount);
    event InitiatedWithDestinationData(
        bytes32 indexed orderID, bytes32 indexed secretHash, uint256 indexed amount, bytes destinationData
    );
    event Redeemed(bytes32 indexed orderID, bytes32 indexed secretHash, bytes secret);
    event Refunded(bytes32 indexed orderID);

    error HTLC__ZeroAddressRedeemer();
    error HTLC__ZeroAddressInitiator();
    error HTLC__ZeroTimelock();
    error HTLC__ZeroAmount();
    error HTLC__SameInitiatorAndRedeemer();
    error HTLC__SameFunderAndRedeemer();
    error HTLC__DuplicateOrder();
    error HTLC__InvalidInitiatorSignature();
    error HTLC__InvalidSecretLength();
    error HTLC__OrderNotInitiated();
    error HTLC__OrderFulfilled();
    error HTLC__IncorrectSecret();
    error HTLC__OrderNotExpired();
    error HTLC__InvalidRedeemerSignature();

    constructor(address token_) {
        token = IERC20(token_);
    }

    /// @notice Locks `amount` tokens from the caller, who is the order's initiator (and gets any refund).
    function initiate(address redeemer, uint256 timelock, uint256 amount, bytes32 secretHash) external {
        _initiate(msg.sender, msg.sender, redeemer, timelock, amount, secretHash);
    }

    /**
     * @notice As `initiate`, and publishes `destinationData` (what the redeemer needs on the other chain)
     * in `InitiatedWithDestinationData`. This is the call Garden's Tron client makes.
     */
    function initiate(
        address redeemer,
        uint256 timelock,
        uint256 amount,
        bytes32 secretHash,
        bytes calldata destinationData
    ) external {
        bytes32 orderID = _initiate(msg.sender, msg.sender, redeemer, timelock, amount, secretHash);
        emit InitiatedWithDestinationData(orderID, secretHash, amount, destinationData);
    }

    /**
     * @notice Locks `amount` tokens from the caller for an order whose initiator is `initiator`. The funder
     * is not part of the order id, so relayers can fund orders for users. The caller must not be the redeemer.
     */
    function initiateOnBehalf(address initiator, address redeemer, uint256 timelock, uint256 amount, bytes32 secretHash)
        external
    {
        if (msg.sender == redeemer) revert HTLC__SameFunderAndRedeemer();
        _initiate(msg.sender, initiator, redeemer, timelock, amount, secretHash);
    }

    /**
     * @notice Gasless initiate: locks `amount` tokens from `initiator`, who approved this contract and signed
     * the TIP-712 `Initiate(redeemer,timelock,amount,secretHash)` (EOA or ERC-1271 wallet). Anyone may submit.
     * @dev A replayed signature yields the same order id and so fails with `HTLC__DuplicateOrder`.
     */
    function initiateWithSignature(
        address initiator,
        address redeemer,
        uint256 timelock,
        uint256 amount,
        bytes32 secretHash,
        bytes calldata signature
    ) external {
        bytes32 digest = _typedDataDigest(keccak256(abi.encode(INITIATE_TYPEHASH, redeemer, timelock, amount, secretHash)));
        if (!_isValidSignature(initiator, digest, signature)) {
            revert HTLC__InvalidInitiatorSignature();
        }
        _initiate(initiator, initiator, redeemer, timelock, amount, secretHash);
    }

    /// @notice Pays the order's redeemer against the 32-byte secret, published in `Redeemed`. Anyone may call.
    function redeem(bytes32 orderID, bytes calldata secret) external {
        if (secret.length != 32) revert HTLC__InvalidSecretLength();
        Order storage order = _openOrder(orderID);
        bytes32 secretHash = sha256(secret);
        if (_orderId(secretHash, order.initiator, order.redeemer, order.timelock, order.amount) != orderID) {
            revert HTLC__IncorrectSecret();
        }
        order.fulfilledAt = block.number;
        emit Redeemed(orderID, secretHash, secret);
        token.safeTransfer(order.redeemer, order.amount);
    }

    /// @notice Returns the tokens to the initiator from block `initiatedAt + timelock + 1` on. Anyone may call.
    function refund(bytes32 orderID) external {
        Order storage order = _openOrder(orderID);
        // Same as `initiatedAt + timelock < block.number`, without overflow for huge timelocks.
        if (block.number - order.initiatedAt <= order.timelock) revert HTLC__OrderNotExpired();
        order.fulfilledAt = block.number;
        emit Refunded(orderID);
        token.safeTransfer(order.initiator, order.amount);
    }

    /**
     * @notice Returns the tokens to the initiator before the timelock, with the redeemer's consent: either the
     * redeemer calls, or `signature` is the redeemer's TIP-712 `Refund(orderId)` signature (EOA or ERC-1271).
     */
    function instantRefund(bytes32 orderID, bytes calldata signature) external {
        Order storage order = _openOrder(orderID);
        if (msg.sender != order.redeemer) {
            if (!_isValidSignature(order.redeemer, instantRefundDigest(orderID), signature)) {
                revert HTLC__InvalidRedeemerSignature();
            }
        }
        order.fulfilledAt = block.number;
        emit Refunded(orderID);
        token.safeTransfer(order.initiator, order.amount);
    }

    /// @notice The TIP-712 digest the redeemer signs to consent to an instant refund of `orderID`.
    function instantRefundDigest(bytes32 orderID) public view returns (bytes32) {
        return _typedDataDigest(keccak256(abi.encode(REFUND_TYPEHASH, orderID)));
    }

    /// @notice The TIP-712 domain separator: name "HTLC", version "3", the 32-bit chain id, this contract.
    function domainSeparator() public view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), tronChainId(), address(this))
        );
    }

    /// @notice The domain as ERC-5267 describes it, with the 32-bit chain id wallets sign over.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name_,
            string memory version_,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", name, version, tronChainId(), address(this), bytes32(0), new uint256[](0));
    }

    /// @notice Tron's chain id as TIP-712 and order ids use it: the low 32 bits of `block.chainid`.
    function tronChainId() public view returns (uint256) {
        return block.chainid & 0xffffffff;
    }

    function _typedDataDigest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", domainSeparator(), structHash));
    }

    /// @dev `signer`'s ECDSA signature over `digest`, or, for a contract, its ERC-1271 approval.
    function _isValidSignature(address signer, bytes32 digest, bytes calldata signature) private view returns (bool) {
        (address recovered, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(digest, signature);
        if (error == ECDSA.RecoverError.NoError && recovered == signer) return true;
        if (signer.code.length == 0) return false;
        (bool ok, bytes memory result) = signer.staticcall(abi.encodeCall(IERC1271.isValidSignature, (digest, signature)));
        return ok && result.length >= 32 && abi.decode(result, (bytes32)) == bytes32(IERC1271.isValidSignature.selector);
    }

    function _initiate(
        address funder,
        address initiator,
        address redeemer,
        uint256 timelock,
        uint256 amount,
        bytes32 secretHash
    ) private returns (bytes32 orderID) {
        if (redeemer == address(0)) revert HTLC__ZeroAddressRedeemer();
        if (initiator == address(0)) revert HTLC__ZeroAddressInitiator();
        if (initiator == redeemer) revert HTLC__SameInitiatorAndRedeemer();
        if (timelock == 0) revert HTLC__ZeroTimelock();
        if (amount == 0) revert HTLC__ZeroAmount();
        orderID = _orderId(secretHash, initiator, redeemer, timelock, amount);
        if (orders[orderID].initiator != address(0)) revert HTLC__DuplicateOrder();
        orders[orderID] = Order(initiator, redeemer, block.number, timelock, amount, 0);
        emit Initiated(orderID, secretHash, amount);
        token.safeTransferFrom(funder, address(this), amount);
    }

    function _openOrder(bytes32 orderID) private view returns (Order storage order) {
        order = orders[orderID];
        if (order.initiator == address(0)) revert HTLC__OrderNotInitiated();
        if (order.fulfilledAt != 0) revert HTLC__OrderFulfilled();
    }

    function _orderId(bytes32 secretHash, address initiator, address redeemer, uint256 timelock, uint256 amount)
        private
        view
        returns (bytes32)
    {
        return sha256(abi.encode(tronChainId(), secretHash, initiator, redeemer, timelock, amount, address(this)));
    }
}
